"""Apache Kafka 4.x in KRaft mode: one combined broker + controller on loopback."""
from __future__ import annotations

import base64
import hashlib
import os
import shutil
import subprocess
import time
from pathlib import Path
from string import Template

from . import fetch, procs
from .common import (
    CONF_DIR, HOST, SERVICES_DIR, ServiceError, env_heap, env_port, find_java, log,
    exited_during_startup, file_size, require_free, run_dir,
)

PROBE_SOURCE = SERVICES_DIR / "probe" / "KafkaProbe.java"


class Kafka:
    name = "kafka"
    env_name = "GANGSCOPE_KAFKA_BOOTSTRAP"
    bundles = {"kafka": "kafka/lib"}

    def __init__(self) -> None:
        self.port = env_port("GANGSCOPE_KAFKA_PORT", 9092)
        self.controller_port = env_port("GANGSCOPE_KAFKA_CONTROLLER_PORT", 9093)
        # the SASL/PLAIN listener (test user in conf/kafka/server.properties)
        self.sasl_port = env_port("GANGSCOPE_KAFKA_SASL_PORT", 9094)
        if len({self.port, self.controller_port, self.sasl_port}) < 3:
            raise ServiceError("kafka: GANGSCOPE_KAFKA_PORT, GANGSCOPE_KAFKA_CONTROLLER_PORT and "
                               "GANGSCOPE_KAFKA_SASL_PORT must differ", code=2)
        self.heap = env_heap("GANGSCOPE_KAFKA_HEAP", "512m")
        self.run = run_dir() / "kafka"
        self.mark = procs.marker(self.name, self.run)

    @property
    def ports(self) -> dict[str, int]:
        return {"port": self.port, "controller_port": self.controller_port, "sasl_port": self.sasl_port}

    def address_line(self) -> str:
        # two lines: the plain listener, then the SASL/PLAIN one
        return f"{self.env_name}={HOST}:{self.port}\nGANGSCOPE_KAFKA_SASL_BOOTSTRAP={HOST}:{self.sasl_port}"

    def check_ports(self) -> None:
        require_free(self.name, self.port, "GANGSCOPE_KAFKA_PORT", "client")
        require_free(self.name, self.controller_port, "GANGSCOPE_KAFKA_CONTROLLER_PORT", "controller")
        require_free(self.name, self.sasl_port, "GANGSCOPE_KAFKA_SASL_PORT", "SASL client")

    def prepare(self) -> list[str]:
        """Fetch, write the config, format storage on first start; returns the command."""
        self.java = find_java(self.name, 17)
        cache = fetch.ensure(self.name, self.bundles)
        self.classpath = str(cache / "kafka" / "lib" / "*")
        self.probe_dir = self._compile_probe(cache)
        data, logs, conf = self.run / "data", self.run / "logs", self.run / "config"
        for folder in (data, logs, conf):
            folder.mkdir(parents=True, exist_ok=True)
        template = Template((CONF_DIR / "kafka" / "server.properties").read_text())
        properties = conf / "server.properties"
        properties.write_text(template.substitute(data_dir=data, **self.ports))
        shutil.copyfile(CONF_DIR / "kafka" / "log4j2.properties", conf / "log4j2.properties")
        jvm = [
            self.java, f"-Xms{self.heap}", f"-Xmx{self.heap}",
            "-XX:+UseG1GC", "-XX:MaxGCPauseMillis=20", "-XX:InitiatingHeapOccupancyPercent=35",
            "-Djava.awt.headless=true", f"-Djava.io.tmpdir={self._tmp()}",
            f"-Dlog4j2.configurationFile={conf / 'log4j2.properties'}", f"-Dkafka.logs.dir={logs}",
            self.mark, "-cp", self.classpath,
        ]
        self.server_log = logs / "server.log"
        self.log_offset = file_size(self.server_log)
        if not (data / "meta.properties").is_file():
            self._format(jvm, properties)
        return jvm + ["kafka.Kafka", str(properties)]

    def _tmp(self) -> Path:
        tmp = self.run / "tmp"
        tmp.mkdir(parents=True, exist_ok=True)
        return tmp

    def _format(self, jvm: list[str], properties: Path) -> None:
        # A cluster id is 16 random bytes, base64url without padding (what `kafka-storage random-uuid` prints).
        cluster_id = base64.urlsafe_b64encode(os.urandom(16)).rstrip(b"=").decode()
        log(f"kafka: formatting storage in {self.run / 'data'} (first start)")
        cmd = [c for c in jvm if not c.startswith(procs.MARKER)]
        # --cluster-id=ID in one word: one id in 64 starts with "-", which the tool's parser takes for an option
        cmd += ["kafka.tools.StorageTool", "format", f"--cluster-id={cluster_id}", "-c", str(properties)]
        done = subprocess.run(cmd, capture_output=True, text=True, stdin=subprocess.DEVNULL)
        if done.returncode != 0:
            detail = (done.stderr or done.stdout).strip().splitlines()[-1:] or ["no output"]
            raise ServiceError(f"kafka: formatting storage failed: {detail[0]}")

    def _compile_probe(self, cache: Path) -> Path:
        """Compile the readiness probe once (a JVM that compiles on every start costs seconds)."""
        out = cache / "kafka" / "probe"
        digest = hashlib.sha256(PROBE_SOURCE.read_bytes()).hexdigest()
        stamp = out / "source.sha256"
        if stamp.is_file() and stamp.read_text().strip() == digest:
            return out
        javac = Path(self.java).resolve().parent / "javac"
        if not javac.is_file():
            raise ServiceError(f"kafka: needs a JDK (javac beside {self.java}) to build its readiness probe", code=2)
        shutil.rmtree(out, ignore_errors=True)
        out.mkdir(parents=True)
        done = subprocess.run(
            [str(javac), "-nowarn", "-d", str(out), "-cp", self.classpath, str(PROBE_SOURCE)],
            capture_output=True, text=True, stdin=subprocess.DEVNULL,
        )
        if done.returncode != 0:
            raise ServiceError(f"kafka: could not compile the readiness probe: {done.stderr.strip()[:300]}")
        stamp.write_text(digest + "\n")
        return out

    def wait_ready(self, pid: int, deadline: float) -> None:
        """Our JVM listening first (cheap), then a real create-topic/produce/consume round trip."""
        for port in (self.port, self.sasl_port):
            while not procs.listens(pid, port):
                self._check_alive(pid)
                if time.monotonic() > deadline:
                    raise ServiceError(f"kafka: port {port} not listening in time (logs: {self.run / 'logs'})")
                time.sleep(0.2)
        budget = max(5, int(deadline - time.monotonic()))
        cmd = [
            self.java, "-Xmx128m", "-XX:TieredStopAtLevel=1", "-XX:+UseSerialGC",
            f"-Dlog4j2.configurationFile={CONF_DIR / 'kafka' / 'log4j2-probe.properties'}",
            "-cp", f"{self.probe_dir}{os.pathsep}{self.classpath}",
            "KafkaProbe", f"{HOST}:{self.port}", str(budget),
        ]
        probe_log = self.run / "logs" / "probe.log"
        with open(probe_log, "w") as err, subprocess.Popen(
            cmd, stdout=subprocess.DEVNULL, stderr=err, stdin=subprocess.DEVNULL
        ) as probe:
            try:
                # Poll rather than wait: a server that dies mid-probe must not cost the whole budget.
                while probe.poll() is None:
                    self._check_alive(pid)
                    time.sleep(0.2)
            finally:
                if probe.poll() is None:
                    probe.kill()
        if probe.returncode != 0:
            last = (probe_log.read_text(errors="replace").strip().splitlines() or ["no output"])[-1]
            raise ServiceError(f"kafka: up but not usable: {last} (logs: {self.run / 'logs'})")

    def _check_alive(self, pid: int) -> None:
        if not procs.child_alive(pid, self.mark):
            raise exited_during_startup(self.name, self.run, self.server_log, self.log_offset)
