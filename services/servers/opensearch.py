"""OpenSearch 2.19 as a real node: the distribution's bootstrap over a home folder laid out like it."""
from __future__ import annotations

import json
import os
import shutil
import time
import urllib.error
import urllib.request
from pathlib import Path
from string import Template

from . import fetch, procs
from .common import (
    CONF_DIR, HOST, ServiceError, env_heap, env_port, exited_during_startup, file_size, find_java,
    require_free, run_dir,
)

# Modules as the distribution lays them out under modules/<name>/. The Maven jars carry no
# plugin descriptor, so we write one; class names are read from the jars of this version.
# name: (entry class, what it brings, plugins it extends through SPI)
MODULES = {
    "transport-netty4": ("org.opensearch.transport.Netty4Plugin", "HTTP and node-to-node transport on Netty 4", []),
    "lang-painless": ("org.opensearch.painless.PainlessPlugin", "the Painless scripting language", []),
    "analysis-common": ("org.opensearch.analysis.common.CommonAnalysisPlugin", "the built-in analyzers, tokenizers and token filters", ["lang-painless"]),
    "mapper-extras": ("org.opensearch.index.mapper.MapperExtrasPlugin", "scaled_float, rank_feature, search_as_you_type and token_count fields", []),
    "reindex": ("org.opensearch.index.reindex.ReindexPlugin", "_reindex, _update_by_query and _delete_by_query", []),
}


class OpenSearch:
    name = "opensearch"
    env_name = "GANGSCOPE_OPENSEARCH_URL"
    bundles = {"opensearch": "opensearch/lib", **{m: f"opensearch/modules/{m}" for m in MODULES}}

    def __init__(self) -> None:
        self.port = env_port("GANGSCOPE_OPENSEARCH_PORT", 9200)
        self.transport_port = env_port("GANGSCOPE_OPENSEARCH_TRANSPORT_PORT", 9300)
        if self.port == self.transport_port:
            raise ServiceError("opensearch: GANGSCOPE_OPENSEARCH_PORT and GANGSCOPE_OPENSEARCH_TRANSPORT_PORT must differ", code=2)
        self.heap = env_heap("GANGSCOPE_OPENSEARCH_HEAP", "512m")
        self.run = run_dir() / "opensearch"
        self.mark = procs.marker(self.name, self.run)

    @property
    def ports(self) -> dict[str, int]:
        return {"http_port": self.port, "transport_port": self.transport_port}

    def address_line(self) -> str:
        return f"{self.env_name}=http://{HOST}:{self.port}"

    def check_ports(self) -> None:
        require_free(self.name, self.port, "GANGSCOPE_OPENSEARCH_PORT", "HTTP")
        require_free(self.name, self.transport_port, "GANGSCOPE_OPENSEARCH_TRANSPORT_PORT", "transport")

    def prepare(self) -> list[str]:
        # 2.x installs a Security Manager at start-up; JDK 24 removed it, so Java 11 to 23 only.
        java = find_java(self.name, 11, 23)
        home = fetch.ensure(self.name, self.bundles) / "opensearch"
        self._lay_out_modules(home)
        (home / "plugins").mkdir(exist_ok=True)
        data, logs, conf, tmp = (self.run / d for d in ("data", "logs", "config", "tmp"))
        for folder in (data, logs, conf, tmp):
            folder.mkdir(parents=True, exist_ok=True)
        template = Template((CONF_DIR / "opensearch" / "opensearch.yml").read_text())
        settings = template.substitute(data_dir=data, logs_dir=logs, **self.ports)
        # Extra opensearch.yml lines (a test's node with tiny thread pools, say), `;` or newline apart.
        extra = os.environ.get("GANGSCOPE_OPENSEARCH_EXTRA_SETTINGS", "").replace(";", "\n").splitlines()
        extra = [s.strip() for s in extra]
        if any(extra):
            settings += "# GANGSCOPE_OPENSEARCH_EXTRA_SETTINGS\n" + "".join(f"{s}\n" for s in extra if s)
        (conf / "opensearch.yml").write_text(settings)
        shutil.copyfile(CONF_DIR / "opensearch" / "log4j2.properties", conf / "log4j2.properties")
        self.server_log = logs / "opensearch.log"
        self.log_offset = file_size(self.server_log)
        return [
            java, f"-Xms{self.heap}", f"-Xmx{self.heap}", *self._as_root_flags(),
            # the distribution's JVM options that matter on a small node
            "-XX:+UseG1GC", "-XX:G1ReservePercent=25", "-XX:InitiatingHeapOccupancyPercent=30",
            "-Xss1m", "-Djava.awt.headless=true", "-Dfile.encoding=UTF-8", "-Djna.nosys=true",
            "-XX:-OmitStackTraceInFastThrow", "-XX:+ShowCodeDetailsInExceptionMessages",
            "-Dio.netty.noUnsafe=true", "-Dio.netty.noKeySetOptimization=true",
            "-Dio.netty.recycler.maxCapacityPerThread=0", "-Dio.netty.allocator.numDirectArenas=0",
            "-Dlog4j.shutdownHookEnabled=false", "-Dlog4j2.disable.jmx=true", "-Dlog4j2.formatMsgNoLookups=true",
            "-Djava.locale.providers=SPI,COMPAT", "-Djava.security.manager=allow",
            "-XX:+ExitOnOutOfMemoryError", f"-XX:ErrorFile={logs}/hs_err_pid%p.log",
            f"-Djava.io.tmpdir={tmp}",
            f"-Dopensearch.path.home={home}", f"-Dopensearch.path.conf={conf}",
            "-Dopensearch.distribution.type=tar", "-Dopensearch.bundled_jdk=false",
            self.mark, "-cp", str(home / "lib" / "*"),
            "org.opensearch.bootstrap.OpenSearch",
        ]

    @staticmethod
    def _as_root_flags() -> list[str]:
        """OpenSearch refuses root, but asks through JNA; CI and these machines run as root.

        Without JNA's native part the node cannot tell, logs a warning and goes on (it also
        skips mlockall and the seccomp filter, which a loopback test node does without).
        Unprivileged users keep JNA and the check.
        """
        if os.geteuid() != 0:
            return []
        return ["-Djna.nounpack=true"]

    def _lay_out_modules(self, home: Path) -> None:
        """Give each module folder the descriptor (and policy) the distribution would ship."""
        version = next((home / "lib").glob("opensearch-[0-9]*.jar")).name[len("opensearch-"):-len(".jar")]
        for module, (classname, description, extends) in MODULES.items():
            folder = home / "modules" / module
            lines = [
                f"description=Module {module}: {description}",
                f"version={version}",
                f"name={module}",
                f"classname={classname}",
                "java.version=11",
                f"opensearch.version={version}",
                "has.native.controller=false",
            ]
            if extends:
                lines.append(f"extended.plugins={','.join(extends)}")
            (folder / "plugin-descriptor.properties").write_text("\n".join(lines) + "\n")
            policy = CONF_DIR / "opensearch" / "policy" / f"{module}.policy"
            if policy.is_file():
                shutil.copyfile(policy, folder / "plugin-security.policy")

    def wait_ready(self, pid: int, deadline: float) -> None:
        """Cluster health green or yellow, asked over HTTP of our own JVM."""
        url = f"http://{HOST}:{self.port}/_cluster/health?wait_for_status=yellow&timeout=2s"
        last = "no answer yet"
        while time.monotonic() < deadline:
            if not procs.child_alive(pid, self.mark):
                raise exited_during_startup(self.name, self.run, self.server_log, self.log_offset)
            if not procs.listens(pid, self.port):
                last = f"not listening on port {self.port} yet"
                time.sleep(0.3)
                continue
            try:
                with urllib.request.urlopen(url, timeout=5) as answer:
                    status = json.load(answer).get("status")
                if status in ("green", "yellow"):
                    return
                last = f"cluster health {status}"
            except (urllib.error.URLError, OSError, ValueError) as e:
                last = str(getattr(e, "reason", e))
            time.sleep(0.3)
        raise ServiceError(f"opensearch: not healthy in time ({last}); logs: {self.run / 'logs'}")
