"""A corpus of secret shapes and of harmless look-alikes, for tests/test_redact_corpus.py.

Every shape is a function of a `Bodies` source: the fixed corpus draws its random parts from a
seeded generator, hypothesis draws them anew each run (`HypothesisBodies`), so the same table
yields both the corpus of record and new variants. Each shape gives (text, secret): `secret`
must not appear in any output, and the text around it should survive.

The formats are those their issuers document (and that the public detector rule sets check:
gitleaks config/gitleaks.toml, detect-secrets plugins, trufflehog pkg/detectors); every value
here is made up. Families follow issue 20's list.
"""

from __future__ import annotations

import base64
import binascii
import random
import string
from typing import Callable

ALNUM = string.ascii_letters + string.digits
HEX = "0123456789abcdef"
B64 = ALNUM + "+/"
URLSAFE = ALNUM + "-_"
# Characters a password may hold, `/` and `@` included (issue 20: URL passwords with them leaked).
PASSWORD_CHARS = ALNUM + "!#%^*_/@~+"


class Bodies:
    """The random parts of secrets, from a seeded generator."""

    def __init__(self, seed: int = 20):
        self.rng = random.Random(seed)

    def chars(self, alphabet: str, n: int) -> str:
        return "".join(self.rng.choice(alphabet) for _ in range(n))

    def choice(self, options):
        return self.rng.choice(list(options))

    def index(self, n: int) -> int:
        return self.rng.randrange(n)

    def alnum(self, n: int) -> str:
        """n letters and digits with at least one upper, one lower letter and one digit (as
        generated keys have: a value of one class only is not one a detector could tell)."""
        if n < 3:
            return self.chars(ALNUM, n)
        body = list(self.chars(ALNUM, n - 3)) + [self.chars(string.ascii_uppercase, 1),
                                                 self.chars(string.ascii_lowercase, 1), self.chars(string.digits, 1)]
        for i in range(3):  # the three fixed classes go to drawn places
            j = self.index(len(body))
            body[-1 - i], body[j] = body[j], body[-1 - i]
        return "".join(body)

    def hex(self, n: int) -> str:
        body = self.chars(HEX, n - 2)
        return body + "a7"  # a letter and a digit: a hex key of all digits is no hex key

    def b64(self, n: int) -> str:
        return self.alnum(n - 2) + self.chars("+/", 1) + self.alnum(3)[:1]

    def password(self, n: int) -> str:
        return self.alnum(n - 2) + self.chars("/@", 1) + self.chars(PASSWORD_CHARS, 1)


class HypothesisBodies(Bodies):
    """The random parts drawn by hypothesis (`data` from `st.data()`): new variants each run."""

    def __init__(self, data):
        from hypothesis import strategies as st

        self.data = data
        self.st = st

    def chars(self, alphabet: str, n: int) -> str:
        return self.data.draw(self.st.text(alphabet=alphabet, min_size=n, max_size=n))

    def choice(self, options):
        return self.data.draw(self.st.sampled_from(list(options)))

    def index(self, n: int) -> int:
        return self.data.draw(self.st.integers(0, n - 1))


Shape = Callable[[Bodies], tuple[str, str]]
SHAPES: list[tuple[str, Shape]] = []


def shape(family: str):
    def add(fn: Shape) -> Shape:
        SHAPES.append((f"{family}:{fn.__name__}", fn))
        return fn

    return add


def aws_secret(b: Bodies) -> str:
    # 40 characters of base64 (AWS IAM docs; trufflehog pkg/detectors/aws): both cases, a digit
    return b.alnum(37) + b.chars("+/", 1) + b.alnum(2)


def aws_id(b: Bodies, prefix: str = "AKIA") -> str:
    return prefix + b.chars(string.ascii_uppercase + "234567", 16)


def basic(user: str, password: str) -> str:
    return base64.b64encode(f"{user}:{password}".encode()).decode()


def checksummed(prefix: str, b: Bodies) -> str:
    """A GitHub or npm token as issued: 30 random base62 characters, then their CRC-32 in six
    base62 digits of the order 0-9, A-Z, a-z (github.blog 2021-04-05; npm 2021-09-23)."""
    return with_checksum(prefix, b.alnum(30))


def with_checksum(prefix: str, body: str) -> str:
    """prefix + body + the CRC-32 of body in six base62 digits (see `checksummed`)."""
    n = binascii.crc32(body.encode())
    digits = "0123456789ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz"
    crc = ""
    for _ in range(6):
        n, r = divmod(n, 62)
        crc = digits[r] + crc
    return prefix + body + crc


# ----------------------------------------------------------------------------- GitHub

@shape("github")
def ghp_in_clone_error(b):
    s = checksummed("ghp_", b)
    return f"fatal: could not read from https://github.com/org/repo using token {s}", s


@shape("github")
def gho_oauth(b):
    s = checksummed("gho_", b)
    return f"GH_OAUTH={s}", s


@shape("github")
def ghs_app_in_header(b):
    s = checksummed("ghs_", b)
    return f"requests.exceptions.HTTPError: 401 for headers {{'Authorization': 'token {s}'}}", s


@shape("github")
def github_pat_fine_grained(b):
    s = "github_pat_11" + b.alnum(20) + "_" + b.alnum(59)
    return f"pushing with {s}", s


# ----------------------------------------------------------------------------- Slack

@shape("slack")
def xoxb_bot(b):
    s = f"xoxb-{b.chars(string.digits, 12)}-{b.chars(string.digits, 13)}-{b.alnum(24)}"
    return f"slack_sdk.errors.SlackApiError: invalid_auth for {s}", s


@shape("slack")
def xoxp_user(b):
    s = f"xoxp-{b.chars(string.digits, 12)}-{b.chars(string.digits, 12)}-{b.chars(string.digits, 13)}-{b.hex(32)}"
    return f"notify(token={s!r})", s


@shape("slack")
def xapp_app_level(b):
    s = f"xapp-1-A{b.chars(string.ascii_uppercase + string.digits, 10)}-{b.chars(string.digits, 13)}-{b.hex(64)}"
    return f"socket mode with {s}", s


@shape("slack")
def slack_webhook(b):
    s = f"{b.chars(string.ascii_uppercase + string.digits, 9)}/B{b.chars(string.ascii_uppercase + string.digits, 10)}/{b.alnum(24)}"
    return f"POST https://hooks.slack.com/services/T{s} failed", s


# ----------------------------------------------------------------------------- OpenAI / Anthropic

@shape("openai")
def sk_legacy(b):
    s = "sk-" + b.alnum(20) + "T3BlbkFJ" + b.alnum(20)
    return f"openai.AuthenticationError: Incorrect API key provided: {s}.", s


@shape("openai")
def sk_proj(b):
    s = "sk-proj-" + b.chars(URLSAFE, 60) + b.alnum(20)
    return f"client = OpenAI(api_key={s!r})", s


@shape("openai")
def sk_ant(b):
    s = "sk-ant-api03-" + b.chars(URLSAFE, 80) + b.alnum(10) + "-" + b.alnum(6) + "AA"
    return f"ANTHROPIC_API_KEY is {s}", s


# ----------------------------------------------------------------------------- Stripe

@shape("stripe")
def sk_live(b):
    s = "sk_live_" + b.alnum(24)
    return f"stripe.error.AuthenticationError: Invalid API Key provided: {s}", s


@shape("stripe")
def rk_live(b):
    s = "rk_live_" + b.alnum(99)
    return f"billing export with {s}", s


@shape("stripe")
def sk_test_env(b):
    s = "sk_test_" + b.alnum(34)
    return f"STRIPE={s}", s


# ----------------------------------------------------------------------------- AWS

@shape("aws")
def akia_bare(b):
    s = aws_id(b)
    return f"using credentials {s} from the instance profile", s


@shape("aws")
def asia_session(b):
    s = aws_id(b, "ASIA")
    return f"assumed role, key {s}", s


@shape("aws")
def secret_after_id(b):
    s = aws_secret(b)
    return f"boto3.client('s3', '{aws_id(b)}', '{s}') failed", s


@shape("aws")
def secret_colon_pair(b):
    s = aws_secret(b)
    return f"credentials {aws_id(b)}:{s} rejected", s


@shape("aws")
def secret_configure_set(b):
    s = aws_secret(b)
    return f"+ aws configure set aws_secret_access_key {s}", s


@shape("aws")
def secret_env(b):
    s = aws_secret(b)
    return f"AWS_SECRET_ACCESS_KEY={s}", s


@shape("aws")
def session_token_json(b):
    s = "IQoJb3JpZ2luX2Vj" + b.b64(200)
    return f'{{"SessionToken": "{s}", "Expiration": "2026-03-02T10:00:00Z"}}', s


# ----------------------------------------------------------------------------- GCP

@shape("gcp")
def private_key_id(b):
    s = b.hex(40)
    return f'{{"type": "service_account", "project_id": "ml-prod", "private_key_id": "{s}",', s


@shape("gcp")
def private_key_json(b):
    s = "MIIEvQIBADANBgkqhkiG9w0BAQEFAASC" + b.b64(60)
    return f'"private_key": "-----BEGIN PRIVATE KEY-----\\n{s}\\n{b.b64(64)}\\n-----END PRIVATE KEY-----\\n",', s


@shape("gcp")
def pem_over_lines(b):
    s = "MIIEpAIBAAKCAQEA" + b.b64(48)
    return f"could not parse key:\n-----BEGIN RSA PRIVATE KEY-----\n{s}\n{b.b64(64)}\n-----END RSA PRIVATE KEY-----", s


@shape("gcp")
def pem_cut_short(b):
    s = "b3BlbnNzaC1rZXktdjEAAAAA" + b.b64(40)
    return f"-----BEGIN OPENSSH PRIVATE KEY-----\n{s}", s


@shape("gcp")
def google_api_key(b):
    s = "AIza" + b.chars(URLSAFE, 32) + b.alnum(3)
    return f"googleapiclient.errors.HttpError: <HttpError 400 key={s} returned", s


@shape("gcp")
def oauth_client_secret(b):
    s = "GOCSPX-" + b.chars(URLSAFE, 25) + b.alnum(3)
    return f'{{"client_secret": "{s}", "client_id": "1234.apps.googleusercontent.com"}}', s


# ----------------------------------------------------------------------------- Azure

@shape("azure")
def sas_sig(b):
    s = b.alnum(30) + "%2B" + b.alnum(10) + "%3D"
    url = f"https://acct.blob.core.windows.net/ckpt/step-10.pt?sv=2022-11-02&ss=b&srt=o&sp=rw&se=2026-01-01T00:00:00Z&sig={s}"
    return f"azure.core.exceptions.ResourceNotFoundError: {url}", s


@shape("azure")
def account_key_in_conn_str(b):
    s = b.b64(86) + "=="
    return f"conn_str = 'DefaultEndpointsProtocol=https;AccountName=mlstore;AccountKey={s};EndpointSuffix=core.windows.net'", s


@shape("azure")
def shared_access_key(b):
    s = b.b64(43) + "="
    return f"Endpoint=sb://bus.servicebus.windows.net/;SharedAccessKeyName=send;SharedAccessKey={s}", s


@shape("azure")
def client_secret_env(b):
    s = b.alnum(3) + "8Q~" + b.chars(URLSAFE + "~.", 31) + b.alnum(3)
    return f"AZURE_CLIENT_SECRET={s}", s


# ----------------------------------------------------------------------------- Hugging Face

@shape("huggingface")
def hf_in_text(b):
    s = "hf_" + b.alnum(34)
    return f"401 Client Error for url: https://huggingface.co/api/whoami-v2 (token {s})", s


@shape("huggingface")
def hf_hub_env(b):
    s = "hf_" + b.alnum(34)
    return f"HUGGING_FACE_HUB_TOKEN={s}", s


@shape("huggingface")
def api_org(b):
    s = "api_org_" + b.alnum(34)
    return f"load_dataset('org/private', use_auth_token='{s}')", s


# ----------------------------------------------------------------------------- JWT

@shape("jwt")
def jwt_bare(b):
    s = "eyJhbGciOiJSUzI1NiIsImtpZCI6IjEifQ." + b.chars(URLSAFE, 40) + b.alnum(3) + "." + b.chars(URLSAFE, 43)
    return f"kube token {s} expired", s


@shape("jwt")
def jwt_in_json(b):
    s = "eyJ0eXAiOiJKV1QiLCJhbGciOiJIUzI1NiJ9." + b.alnum(60) + "." + b.chars(URLSAFE, 43)
    return f'{{"access_token": "{s}", "token_type": "Bearer"}}', s


# ----------------------------------------------------------------------------- basic / bearer

@shape("http_auth")
def authorization_basic(b):
    s = basic("trainer", b.password(14))
    return f"Authorization: Basic {s}", s


@shape("http_auth")
def basic_alone(b):
    s = basic("svc-" + b.chars(string.ascii_lowercase, 5), b.password(16))
    return f"retrying with Basic {s}", s


@shape("http_auth")
def bearer_anywhere(b):
    s = b.chars(URLSAFE, 38) + b.alnum(2)
    return f"curl -H 'Authorization: Bearer {s}' https://api.internal/v1", s


@shape("http_auth")
def x_api_key_header(b):
    s = b.alnum(32)
    return f"headers={{'X-Api-Key': '{s}', 'Accept': 'application/json'}}", s


# ----------------------------------------------------------------------------- URL userinfo

@shape("url")
def postgres_slash_at(b):
    s = b.alnum(6) + "/" + b.alnum(4) + "@" + b.alnum(5)
    return f"sqlalchemy.exc.OperationalError: postgresql://trainer:{s}@db.internal:5432/runs", s


@shape("url")
def https_userinfo(b):
    s = b.password(18)
    return f"git clone https://x-access-token:{s}@github.com/org/repo", s


@shape("url")
def redis_no_user(b):
    s = b.alnum(20)
    return f"redis.exceptions.ConnectionError: redis://:{s}@cache:6379/0", s


@shape("url")
def mongodb_srv(b):
    s = b.alnum(10) + "%40" + b.alnum(6)
    return f"pymongo.errors.ServerSelectionTimeoutError: mongodb+srv://ml:{s}@cluster0.x.mongodb.net/?retryWrites=true", s


@shape("url")
def amqp_userinfo(b):
    s = b.password(12)
    return f"kombu: amqp://celery:{s}@rabbit:5672//", s


# ----------------------------------------------------------------------------- command-line flags

@shape("flag")
def password_space(b):
    s = b.password(14)
    return f"+ python sync.py --user ml --password {s} --out /data", s


@shape("flag")
def password_equals(b):
    s = b.password(14)
    return f"launch: --db-password={s}", s


@shape("flag")
def api_key_space(b):
    s = b.alnum(32)
    return f"running eval.py --api-key {s} --model gpt2", s


@shape("flag")
def api_key_equals(b):
    s = b.alnum(32)
    return f"running eval.py --api-key={s}", s


@shape("flag")
def token_space(b):
    s = b.alnum(40)
    return f"huggingface-cli upload org/model ./out --token {s}", s


@shape("flag")
def token_equals(b):
    s = b.alnum(40)
    return f"+ torchrun train.py --token={s}", s


@shape("flag")
def mysql_p_joined(b):
    s = b.password(12)
    return f"+ mysql -u root -p{s} -h db.internal runs", s


@shape("flag")
def mysqldump_p_joined(b):
    s = b.alnum(14)
    return f"mysqldump -p{s} --all-databases > /backup/all.sql", s


@shape("flag")
def smbclient_user_percent(b):
    # smbclient(1) `-U [DOMAIN\\]USERNAME[%PASSWORD]`: the password may hold `/` and `@`
    s = b.password(14)
    user = b.choice(["ml-bot", "CORP\\\\svc_ml", "corp.local/alice"])
    return f"+ smbclient //nas/datasets -U '{user}%{s}' -c 'get shard-0001.tar'", s


@shape("flag")
def sqlplus_logon(b):
    # SQL*Plus `username/password@connect_identifier`: a password with `@` or `/` is quoted
    s = b.choice([b.alnum(12), b.password(12)])
    secret = f'"{s}"' if any(c in s for c in "/@") else s
    return f"sqlplus -s {b.choice(['system', 'sys', 'C##ML'])}/{secret}@//db.internal:1521/FREEPDB1 @load.sql", s


@shape("flag")
def docker_login_p(b):
    s = b.password(16)
    return f"+ docker login -u robot -p {s} registry.internal", s


@shape("flag")
def curl_u(b):
    s = b.password(12)
    return f"+ curl -sf -u admin:{s} https://registry.internal/v2/_catalog", s


@shape("flag")
def curl_user_long(b):
    s = b.password(12)
    return f"curl --user ml-bot:{s} -X POST https://ci.internal/hook", s


@shape("flag")
def rclone_s3_secret(b):
    s = aws_secret(b)
    return f"rclone copy /ckpt s3:bucket --s3-access-key-id {aws_id(b)} --s3-secret-access-key {s}", s


@shape("flag")
def secret_flag_space(b):
    s = b.alnum(28)
    return f"mc alias set minio http://minio:9000 admin --secret-key {s}", s


# ----------------------------------------------------------------------------- Python calls

@shape("python_call")
def wandb_login_key(b):
    s = b.hex(40)
    return f"    wandb.login(key='{s}')", s


@shape("python_call")
def wandb_login_key_double(b):
    s = b.hex(40)
    return f'wandb.errors.AuthenticationError: wandb.login(key="{s}", relogin=True) failed', s


@shape("python_call")
def requests_auth_tuple(b):
    s = b.password(14)
    return f"requests.get('https://registry.internal/v2/', auth=('robot', '{s}')) raised ConnectionError", s


@shape("python_call")
def http_basic_auth(b):
    s = b.password(14)
    return f"    session.auth = HTTPBasicAuth('ml', '{s}')", s


@shape("python_call")
def hub_login_token(b):
    s = b.alnum(40)
    return f"    huggingface_hub.login(token=\"{s}\")", s


# ----------------------------------------------------------------------------- docker config

@shape("docker_config")
def docker_auth(b):
    s = basic("robot$ci", b.password(20))
    return f'{{"auths": {{"registry.internal": {{"auth": "{s}"}}}}}}', s


@shape("docker_config")
def docker_identitytoken(b):
    s = b.chars(URLSAFE, 60) + b.alnum(4)
    return f'{{"auths": {{"acr.io": {{"auth": "", "identitytoken": "{s}"}}}}}}', s


# ----------------------------------------------------------------------------- names that say secret

@shape("named")
def environment_dump(b):
    s = b.password(16)
    return f"Environment: DB_PASSWORD={s} PATH=/usr/bin", s


@shape("named")
def service_secret_env(b):
    s = b.alnum(30)
    return f"MY_SERVICE_SECRET={s}", s


@shape("named")
def json_client_secret(b):
    s = b.alnum(30)
    return f'{{"name": "ml", "clientSecret": "{s}"}}', s


@shape("named")
def yaml_api_key(b):
    s = b.alnum(32)
    return f"  api_key: {s}", s


@shape("named")
def wandb_api_key_env(b):
    s = b.hex(40)
    return f"WANDB_API_KEY={s}", s


@shape("named")
def python_dict_password(b):
    s = b.password(14)
    return f"environ({{'PATH': '/usr/bin', 'MLFLOW_TRACKING_PASSWORD': '{s}'}})", s


@shape("named")
def k8s_env_value(b):
    s = b.password(14)
    return f'{{"name": "REGISTRY_CREDENTIALS", "value": "{s}"}}', s


@shape("named")
def netrc(b):
    s = b.hex(40)
    return f"machine api.wandb.ai login user password {s}", s


@shape("named")
def libpq_keywords(b):
    s = b.password(14)
    return f"host=db port=5432 user=ml password={s} dbname=runs", s


# ----------------------------------------------------------------------------- other providers

@shape("provider")
def gitlab_pat(b):
    s = "glpat-" + b.chars(URLSAFE, 17) + b.alnum(3)
    return f"remote: HTTP Basic: Access denied for {s}", s


@shape("provider")
def npm_token(b):
    s = checksummed("npm_", b)
    return f"//registry.npmjs.org/:_authToken={s}", s


@shape("provider")
def pypi_token(b):
    s = "pypi-AgEIcHlwaS5vcmc" + b.chars(URLSAFE, 60) + b.alnum(10)
    return f"twine upload -p {s} dist/*", s


@shape("provider")
def databricks_token(b):
    s = "dapi" + b.hex(32)
    return f"databricks.sdk.errors.PermissionDenied: token {s} is invalid", s


@shape("provider")
def nvidia_ngc(b):
    s = "nvapi-" + b.chars(URLSAFE, 60) + b.alnum(4)
    return f"NGC login failed for {s}", s


@shape("provider")
def replicate(b):
    s = "r8_" + b.alnum(37)
    return f"replicate.exceptions.ReplicateError: token {s} unauthorized", s


@shape("provider")
def sendgrid(b):
    s = "SG." + b.chars(URLSAFE, 20) + b.alnum(2) + "." + b.chars(URLSAFE, 40) + b.alnum(3)
    return f"smtp auth with {s} refused", s


@shape("github")
def ghp_url_encoded(b):
    # a JSON body URL-encoded into a query: `%22` glues the token to a digit, no word boundary
    s = checksummed(b.choice(["ghp_", "ghu_", "ghr_"]), b)
    return f"POST /hooks/ci?payload=%7B%22auth%22%3A%22{s}%22%7D 401", s


@shape("provider")
def npm_glued(b):
    s = checksummed("npm_", b)
    return f"npm ERR! 403 In most cases, you or one of your dependencies are requesting a package version that is forbidden (token:{s}x)", s


@shape("provider")
def testpypi_token(b):
    s = "pypi-AgENdGVzdC5weXBpLm9yZw" + b.chars(URLSAFE, 60) + b.alnum(10)
    return f"Uploading distributions to https://test.pypi.org/legacy/ with {s}", s


@shape("provider")
def vault_token(b):
    s = b.choice(["hvs.", "hvb."]) + b.alnum(24) + b.chars(URLSAFE, 20)
    return f"+ vault login {s}", s


# ----------------------------------------------------------------------------- command-line password options
# Each command's manual says which option takes a password; the same letter elsewhere is kept
# (HARMLESS: `mkdir -p`, `srun -p gpu`, `ssh -p 2222`, `redis-cli -p 6379`, `mysql -P 3306`).

@shape("flag")
def mongosh_p(b):
    s = b.password(14)
    return f"+ kubectl exec mongo-0 -- mongosh -u root -p {s} --authenticationDatabase admin --eval 'db.stats()'", s


@shape("flag")
def cqlsh_p_joined_or_spaced(b):
    s = b.alnum(12)
    return b.choice([f"cqlsh -u cassandra -p {s} cassandra-0", f"$ cqlsh -ucassandra -p{s}"]), s


@shape("flag")
def sqlcmd_P(b):
    s = b.password(14)
    return f"/opt/mssql-tools18/bin/sqlcmd -S localhost -U sa -P '{s}' -C -Q 'SELECT 1'", s


@shape("flag")
def ldap_w(b):
    s = b.alnum(12)
    return f'ldapsearch -x -H ldap://ldap:389 -D "cn=admin,dc=example,dc=org" -w {s} -b "ou=people,dc=example,dc=org"', s


@shape("flag")
def ipmitool_P(b):
    s = b.alnum(12)
    return f"ipmitool -I lanplus -H 10.0.3.17 -U root -P {s} -p 623 chassis power status", s


@shape("flag")
def keytool_storepass(b):
    s = b.alnum(12)
    return f"keytool -importkeystore -srckeystore a.p12 -srcstorepass {s} -destkeystore b.jks -deststorepass {s}", s


@shape("flag")
def zip_P(b):
    s = b.password(12)
    return f"+ zip -q -P {s} -r ckpt-epoch3.zip /mnt/ckpt/epoch3", s


@shape("flag")
def mosquitto_P(b):
    s = b.alnum(12)
    return f"mosquitto_pub -h broker -u trainer -P {s} -t runs/7/loss -m 2.31", s


@shape("flag")
def az_login_p(b):
    s = b.password(16)
    return f"+ az login -u ml-bot@example.com -p {s}", s


def corpus(seed: int = 20) -> list[tuple[str, str, str]]:
    """The fixed corpus: (shape name, text, secret) for every shape, from a seeded generator."""
    bodies = Bodies(seed)
    return [(name, *make(bodies)) for name, make in SHAPES]


# ----------------------------------------------------------------------------- harmless look-alikes

HARMLESS: list[str] = [
    "TOKEN_LIMIT=4096",
    "PAD_TOKEN=0",
    "PRIMARY_KEY=id",
    "eot_token = 50256",
    "ERROR 1045 (28000): Access denied for user 'root'@'localhost' (using password: YES)",
    "botocore.exceptions.NoCredentialsError: Unable to locate credentials",
    "NoCredentialsError: Unable to locate credentials",
    "google.auth.exceptions.DefaultCredentialsError: Your default credentials were not found.",
    "tokenizer_name=meta-llama/Llama-2-7b-hf",
    "TOKENIZER=gpt2 MODEL=EleutherAI/gpt-neox-20b",
    "HF_TOKEN_PATH=/root/.cache/huggingface/token",
    "GOOGLE_APPLICATION_CREDENTIALS=/var/secrets/google/key.json",
    "load_dataset('c4', 'en', use_auth_token=True)",
    "hub.login(token=None)",
    "api_key: null",
    "password_file: /etc/secret/db-password",
    "TOKENIZERS_PARALLELISM=false MAX_TOKENS=4096",
    "step 120 | 1532.4 tokens/s | num_tokens: 1024 | max_tokens=512",
    "tokenizer.pad_token_id = 0; eos_token: </s>; bos_token='<s>'",
    "special_tokens: {'pad_token': '<pad>', 'unk_token': '<unk>'}",
    "KeyError: 'input_ids'",
    "out = attn(query, key, value, key_padding_mask=key_padding_mask)",
    "sort_key=step cache_key: 'epoch-3'",
    "git commit 4f2b1c9e8d7a6b5c4d3e2f1a0b9c8d7e6f5a4b3c",
    "saved checkpoint sha256:9f86d081884c7d659a2feaa0c55ad015a3bf4f1b2b0b822cd15d6c15b0f00a08",
    "Downloading https://huggingface.co/meta-llama/Llama-2-7b-hf/resolve/main/config.json",
    "scraping http://10.0.0.1:8080/metrics for user@example.com",
    "WANDB_MODE=offline WANDB_PROJECT=llama",
    "SECRET_NAME=db-credentials",
    "PASSWORD_MIN_LENGTH=12",
    "TOKEN_TYPE=bearer",
    "AUTH_ENABLED=false",
    "HF_TOKEN=",
    "password: None",
    "vocab_size=50257 eos_token_id=50256",
    "MODEL_KEY=llama-7b",
    "sorted(items, key=len)",
    "batch = collate(key='labels')",
    "mkdir -p /workspace/ckpt && docker run -p 8080:80 trainer:1",
    "kubectl create secret generic hf-token --from-file=token=/tmp/token",
    "torch.distributed.DistStoreError: Timed out after 901 seconds waiting for clients. 2/4 clients joined.",
    "Basic block size 128 for layer 3",
    # the same option letters on commands where they are no password
    "+ srun -p gpu -N 2 --ntasks-per-node=8 python train.py",
    "+ ssh -p 2222 ml@gpu-7 'nvidia-smi' && redis-cli -h cache -p 6379 ping",
    "mysql -h db -P 3306 -u ml -p runs < schema.sql",
    "python -m pytest -p no:cacheprovider tests && patch -p1 < fix.diff",
    "mongosh --host mongo-0 --port 27017 --eval 'db.stats()' && ssh -p 2201 ml@gpu-2",
    "keytool -list -keystore truststore.p12 -storepass:env TRUSTSTORE_PASSWORD",
    "+ cqlsh -u cassandra -p $CASSANDRA_PASSWORD cassandra-0",
    "gzip -p 8 /mnt/logs/train.log",
]


def harmless_strategy():
    """Look-alikes drawn anew: a name that says TOKEN, KEY, AUTH or PASSWORD with a value that
    is no secret -- a small number, a boolean, a path, a model or tokenizer name, nothing."""
    from hypothesis import strategies as st

    weak = st.sampled_from(["TOKEN_LIMIT", "PAD_TOKEN", "HF_TOKEN", "API_KEY", "api_key", "token", "eot_token",
                            "OPENAI_API_KEY", "access_token", "auth", "SORT_KEY", "PRIMARY_KEY", "private_key"])
    strong = st.sampled_from(["PASSWORD", "DB_PASSWORD", "client_secret", "SECRET", "credentials", "password"])
    number = st.integers(0, 99999).map(str)
    boolean = st.sampled_from(["true", "false", "True", "False", "yes", "no", "none", "None", "null", "0", "1"])
    path = st.lists(st.from_regex(r"[a-z][a-z0-9_\-]{0,10}", fullmatch=True), min_size=1, max_size=4).map(
        lambda parts: "/" + "/".join(parts))
    model = st.tuples(st.sampled_from(["meta-llama", "EleutherAI", "openai-community", "google", "mistralai", "Qwen"]),
                      st.sampled_from(["Llama-2-7b-hf", "gpt-neox-20b", "gpt2", "t5-base", "Mistral-7B-v0.1",
                                       "Qwen2-7B-Instruct", "bert-base-uncased"])).map("/".join)
    tokenizer = st.sampled_from(["gpt2", "bert-base-uncased", "cl100k_base", "<|endoftext|>", "</s>", "<pad>", "[PAD]"])
    weak_value = st.one_of(number, boolean, path, model, tokenizer)
    strong_value = st.one_of(boolean, path, st.just(""))
    sep = st.sampled_from(["=", ": ", " = ", "="])
    return st.one_of(
        st.tuples(weak, sep, weak_value).map("".join),
        st.tuples(strong, sep, strong_value).map("".join),
        st.tuples(st.sampled_from(["--max-tokens", "--token-limit", "--num-key-value-heads", "--tokenizer"]),
                  st.sampled_from([" ", "="]), st.one_of(number, tokenizer)).map("".join),
    )


# ----------------------------------------------------------------------------- the measure set

# Written after the rules, from log lines of the same families as seen in the wild (library
# messages, shells echoing commands, config dumps), and not used to shape them: the numbers
# the note reports for it are measured before any change that followed.
MEASURE_SECRETS: list[tuple[str, str]] = [
    ("botocore.exceptions.ClientError: https://b.s3.amazonaws.com/k?X-Amz-Algorithm=AWS4-HMAC-SHA256&X-Amz-Credential=ASIAQ3EXAMPLE7KEYZZ2%2F20240501"
     "&X-Amz-Signature=5d672d79c15b13162d9279b0855cfba6789a8edb4c82c400e06b5924a6f2b5d7", "5d672d79c15b13162d9279b0855cfba6789a8edb4c82c400e06b5924a6f2b5d7"),
    ("Looking in indexes: https://__token__:pypi-AgEIcHlwaS5vcmcCJDk2ZjY4ZTVmLTQ5YjItNDk1NC1hZWI3LTVhNzE1ZjA0NmE2YQ@pypi.internal/simple",
     "pypi-AgEIcHlwaS5vcmcCJDk2ZjY4ZTVmLTQ5YjItNDk1NC1hZWI3LTVhNzE1ZjA0NmE2YQ"),
    ("+ pip install --extra-index-url https://ci:Tr41n3r-Pw@nexus.internal/simple torch", "Tr41n3r-Pw"),
    ("+ git remote add origin https://oauth2:glpat-Xy7Rk2LmQp9ZtW3sVb8N@gitlab.com/ml/llama.git", "glpat-Xy7Rk2LmQp9ZtW3sVb8N"),
    ("+ docker login -u AWS -p eyJwYXlsb2FkIjoiQ0ZJZk5ZWmJhU3pVWm1LZ2x3 123456789012.dkr.ecr.us-east-1.amazonaws.com",
     "eyJwYXlsb2FkIjoiQ0ZJZk5ZWmJhU3pVWm1LZ2x3"),
    ("kubectl --server https://10.0.0.1:6443 --token=eyJhbGciOiJSUzI1NiJ9.eyJpc3MiOiJrdWJlcm5ldGVzIn0.Qm9ndXNTaWduYXR1cmVIZXJl get pods",
     "eyJhbGciOiJSUzI1NiJ9.eyJpc3MiOiJrdWJlcm5ldGVzIn0.Qm9ndXNTaWduYXR1cmVIZXJl"),
    ("psql: error: connection to server failed: postgresql://postgres:hunter2@localhost/db", "hunter2"),
    ("+ redis-cli -h cache -a S0meP4ssw0rd ping", "S0meP4ssw0rd"),
    ('config: {"password": "hunter2", "host": "db"}', "hunter2"),
    ("GET /v1/models?api_key=abcdef0123456789abcd&format=json 401", "abcdef0123456789abcd"),
    ("s3cmd --access_key=AKIAIOSFODNN7EXAMPL3 --secret_key=wJalrXUtnFEMI/K7MDENG/bPxRfiCYEXAMPLEKEY put x s3://b",
     "wJalrXUtnFEMI/K7MDENG/bPxRfiCYEXAMPLEKEY"),
    ("aws_session_token = IQoJb3JpZ2luX2VjEJr//////////wEaCXVzLWVhc3QtMSJHMEUCIQDkZ1", "IQoJb3JpZ2luX2VjEJr//////////wEaCXVzLWVhc3QtMSJHMEUCIQDkZ1"),
    ("COMET_API_KEY=Zq3bL9xWm2Nc7Vt4Rp8Ks1Jd", "Zq3bL9xWm2Nc7Vt4Rp8Ks1Jd"),
    ('NEPTUNE_API_TOKEN="eyJhcGlfYWRkcmVzcyI6Imh0dHBzOi8vYXBwLm5lcHR1bmUuYWkifQ=="', "eyJhcGlfYWRkcmVzcyI6Imh0dHBzOi8vYXBwLm5lcHR1bmUuYWkifQ=="),
    ("  pass: S3cret!Pass", "S3cret!Pass"),
    ("DATABASE_URL=mysql://root:r00tPw@db:3306/app", "r00tPw"),
    ("Server=tcp:x.database.windows.net,1433;Initial Catalog=db;User ID=adm;Password=Pa$$w0rd!;", "Pa$$w0rd!"),
    ("mongodb://admin:Sup3rSecretPw@mongo-0.mongo:27017,mongo-1.mongo:27017/?replicaSet=rs0", "Sup3rSecretPw"),
    ('curl -H "X-Auth-Token: 0a1b2c3d4e5f60718293a4b5c6d7e8f9"', "0a1b2c3d4e5f60718293a4b5c6d7e8f9"),
    ('curl --header "PRIVATE-TOKEN: glpat-AbCdEfGh1234567890Xy" https://gitlab.com/api/v4/projects', "glpat-AbCdEfGh1234567890Xy"),
    ("HTTP_PROXY=http://proxyuser:Pr0xyP4ss@proxy:3128", "Pr0xyP4ss"),
    ('{"token": "d2c1e0f9a8b7c6d5e4f3a2b1c0d9e8f7"}', "d2c1e0f9a8b7c6d5e4f3a2b1c0d9e8f7"),
    ("RuntimeError: invalid credentials for user ml (password=Winter2024!)", "Winter2024!"),
    ("    http://127.0.0.1:8888/lab?token=3f2c9a8b7d6e5f4a3b2c1d0e9f8a7b6c5d4e3f2a1b0c9d8e", "3f2c9a8b7d6e5f4a3b2c1d0e9f8a7b6c5d4e3f2a1b0c9d8e"),
    ("+ az login --service-principal -u 0000-app -p 'Xy98Q~AbCdEfGhIjKlMnOpQrStUvWxYz0123456' --tenant t", "Xy98Q~AbCdEfGhIjKlMnOpQrStUvWxYz0123456"),
    ("Set-Cookie: session=Fe26.2**a1b2c3d4e5f6a7b8c9d0e1f2a3b4c5d6; HttpOnly", "Fe26.2**a1b2c3d4e5f6a7b8c9d0e1f2a3b4c5d6"),
    ("    client = MlflowClient(tracking_uri, token='dapi0123456789abcdef0123456789abcdef')", "dapi0123456789abcdef0123456789abcdef"),
    ("ValueError: bad key sk-ant-api03-Zx9Yw8Vu7Ts6Rq5Po4Nm3Lk2Ji1Hg0Fe9Dc8Ba7-AbCdEfAA", "sk-ant-api03-Zx9Yw8Vu7Ts6Rq5Po4Nm3Lk2Ji1Hg0Fe9Dc8Ba7-AbCdEfAA"),
    ("export SLACK_WEBHOOK_URL=https://hooks.slack.com/services/T0ABCDEF1/B0ABCDEF2/Zy9Xw8Vu7Ts6Rq5Po4Nm3Lk2", "Zy9Xw8Vu7Ts6Rq5Po4Nm3Lk2"),
    ("sshpass -p 'n0tS0S3cret' ssh ml@gpu-7", "n0tS0S3cret"),
    ("    ftp = FTP_TLS('ftp.internal', user='ml', passwd='Ftp-P4ssw0rd')", "Ftp-P4ssw0rd"),
    ("ENCRYPTION_KEY=Ab3dEf6hIj9kLm2nOp5qRs8tUv1wXy4z", "Ab3dEf6hIj9kLm2nOp5qRs8tUv1wXy4z"),
]

MEASURE_HARMLESS: list[str] = [
    "wandb: Appending key for api.wandb.ai to your netrc file: /root/.netrc",
    "Token is valid (permission: write).",
    "Your token has been saved to /root/.cache/huggingface/token",
    "max_new_tokens=256, temperature=0.7",
    "Special tokens have been added in the vocabulary, make sure the associated word embeddings are fine-tuned or trained.",
    "Setting `pad_token_id` to `eos_token_id`:50256 for open-end generation.",
    "key: train/loss value: 2.31",
    'psql: error: FATAL:  password authentication failed for user "postgres"',
    "KeyError: 'model.layers.0.self_attn.q_proj.weight'",
    'Missing key(s) in state_dict: "encoder.weight", "decoder.bias".',
    "num_key_value_heads: 8",
    "use_cache=True is incompatible with gradient checkpointing. Setting use_cache=False.",
    "AWS_REGION=us-east-1 AWS_DEFAULT_REGION=us-east-1",
    "aws_access_key_id: None",
    "Found credentials in environment variables.",
    "Found credentials from IAM Role: ml-node-role",
    "AUTH_TYPE=oauth2",
    "token_type_ids: [0, 0, 0]",
    "KEY_PATH=/etc/ssl/private/tls.key",
    "Passing a tuple of `past_key_values` is deprecated",
    "eos_token_id=2 bos_token_id=1 pad_token_id=0",
    "cache_dir=/root/.cache/huggingface/hub token=None revision=main",
    "private_key_path: ~/.ssh/id_rsa",
    "+ python serve.py --hf-token-path /mnt/secrets/hf",
    '    client = OpenAI(api_key=os.environ["OPENAI_API_KEY"])',
    "    token = tokenizer.decode(ids)",
    "    key = jax.random.PRNGKey(0)",
    "    password = getpass.getpass()",
    "    conn = connect(user=args.user, password=args.password)",
    "secret_scanning: disabled",
    "PASSWORD_HASHERS=argon2",
    "Loading checkpoint shards: 100%|##########| 2/2 [00:03<00:00, 1.52s/it]",
]


# Harvested from command lines in public repositories' scripts and READMEs (mongosh, cqlsh,
# sqlcmd, ldapsearch, openssl, ipmitool, keytool, zip), rebuilt with made-up values; measure only,
# written before the command-option rules. Before them: 8/11 leak, 0/15 destroyed. With them
# as first written: 2/11 leak (a command given by its path, `/usr/bin/ipmitool`, was not read as
# the command); after that fix (made looking at this set, so no longer blind to it): 0/11, 0/15.
HARVESTED_SECRETS: list[tuple[str, str]] = [
    ("docker exec -it kg-mongodb mongosh -u admin -p Adm1n-Mongo-88 --authenticationDatabase admin", "Adm1n-Mongo-88"),
    ("  cqlsh -u cassandra -p Xk4pT9wQ2m", "Xk4pT9wQ2m"),
    ("$ cqlsh -ucassandra -pCassPw77x", "CassPw77x"),
    ("/opt/mssql-tools/bin/sqlcmd -S localhost -U SA -P 'Str0ng-Sql-Pw1' -Q 'CREATE DATABASE runs'", "Str0ng-Sql-Pw1"),
    ('ldapsearch -x -D "cn=admin,dc=example,dc=com" -w Ld4p-Adm1n -b "dc=example,dc=com" "(uid=ml)"', "Ld4p-Adm1n"),
    ("openssl genrsa -des3 -passout pass:Ops3l-Key-9 -out server.pass.key 2048", "Ops3l-Key-9"),
    ("/usr/bin/ipmitool -I lanplus -H 10.1.8.100 -U qe-scale -P B4y-Ipmi-77 -p 623 -L ADMINISTRATOR chassis power status",
     "B4y-Ipmi-77"),
    ("keytool -importcert -alias ca -keystore truststore.p12 -storepass Tru5t-St0re -noprompt -file ca.crt", "Tru5t-St0re"),
    ("mysqladmin -u root -pR00t-Adm1n status", "R00t-Adm1n"),
    ("zip -P Z1p-Secr3t -r ckpt.zip ckpt/", "Z1p-Secr3t"),
    ("curl -s 'https://api.example.com/v1/runs?access_token=%22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%22'",
     "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"),
]

HARVESTED_HARMLESS: list[str] = [
    "srun -p gpu --nodes=2 --ntasks-per-node=8 python train.py",
    "sbatch -p a100 -N 4 job.sh",
    "ipmitool -I lanplus -H 10.0.0.5 -U admin -E -p 623 sdr type temperature",
    "redis-cli -h cache -p 6379 ping",
    "ssh -p 2222 ml@gpu-7 nvidia-smi",
    "psql -h db -p 5432 -U postgres -d metrics",
    "mysql -u root -p metrics < dump.sql",
    'ldapsearch -x -D "cn=admin,dc=example,dc=com" -W -b "dc=example,dc=com"',
    "sqlcmd -S myserver -E -i script.sql",
    "pytest -p no:cacheprovider -q tests",
    "mkdir -p /mnt/ckpt && cp -p a.pt b.pt",
    "git log -p -1",
    "docker run -p 8888:8888 -v /data:/data jupyter/base-notebook",
    'mongosh --host mongo-0 --port 27017 --quiet --eval "db.stats()"',
    "openssl req -new -key server.key -out server.csr -subj /CN=trainer",
]


# `user%password` (Samba) and `user/password@db` (Oracle) command lines, collected from public
# scripts and READMEs and from the manuals (smbclient(1), rpcclient(1), net(8) `-U
# [DOMAIN\\]USERNAME[%PASSWORD]`; SQL*Plus User's Guide 'SQLPLUS Program Syntax'
# `{username[/password][@connect_identifier] | / | /NOLOG}`; rman, expdp/impdp, sqlldr
# `userid=`, dgmgrl take the same logon), rebuilt with made-up values. BUILD was looked at
# while writing the rules (parsers/redact_rules.py samba_user_password, oracle_logon_password);
# MEASURE was written first and only scored: before the rules, build 8/8 leak, 0/6 destroyed;
# measure 9/9 leak, 0/8 destroyed. After: 0/8, 0/6; measure 0/9, 0/8.
LOGON_BUILD_SECRETS: list[tuple[str, str]] = [
    ("smbclient -U SVC_TGS%Gpp-St1ll-Standing //10.10.10.100/Users", "Gpp-St1ll-Standing"),
    ("smbclient //10.1.2.3/Logs -U 'corp.local/wallace%Welc0me2026@'", "Welc0me2026@"),
    ("+ smbclient -U 'ml-bot%Smb-B0t-pw' //nas/datasets -c 'get train.tar'", "Smb-B0t-pw"),
    ("QUERY=`sqlplus -s system/Man4ger-77@${y} << EOF", "Man4ger-77"),
    ("docker exec -i oracle-xe sqlplus sys/MiClave-BD123@localhost:1521/XE as sysdba < init-db.sql", "MiClave-BD123"),
    ("sqlplus -S Cm_system/Pr0d-0ra9@$SQLCONN <<!", "Pr0d-0ra9"),
    ("sqlplus sys/Th3-Super-Secret1509! as sysdba", "Th3-Super-Secret1509!"),
    ("sqlplus -s -l  fintech/F1n-tech-42@db.us.example.com:1521/codescan > /dev/null 2>&1", "F1n-tech-42"),
]
LOGON_BUILD_HARMLESS: list[str] = [
    "smbclient -U 'guest%' -L //10.0.0.9",
    "smbclient //truenas/share -U username",
    "EXF_COUNT=$(sqlplus -s / as sysdba <<EOSQL",
    'sqlplus -s "${CONNECT_STRING}" @"${ROOT_DIR}/sql/awr_report.sql"',
    "sqlplus -s sys/$ORACLE_PWD as sysdba <<EOF",
    "sqlplus -S system/%SYSTEM_PWD%@%ORACLE_SID% @%SERVER_HOME%\\sql\\1_tablespaces.sql",
]
LOGON_MEASURE_SECRETS: list[tuple[str, str]] = [
    ('rpcclient -U "admin%Rpc-Adm1n-5" 10.0.0.5 -c enumdomusers', "Rpc-Adm1n-5"),
    ("smbclient --user=bob%B0b-Smb-22 //fileserver/data", "B0b-Smb-22"),
    ("net ads join -U Administrator%Adm1n-J0in-8", "Adm1n-J0in-8"),
    ("sqlplus -L -S system/Sy5tem-Pw-3@//db:1521/FREEPDB1 @install_headless.sql", "Sy5tem-Pw-3"),
    ("echo exit | sqlplus C##APP/App-Us3r-41@localhost/ORCLCDB @01_createUser.sql", "App-Us3r-41"),
    ("rman target sys/Rm4n-Back-9@prod", "Rm4n-Back-9"),
    ("expdp system/Exp-Dp-pw6@pdb1 directory=DATA_PUMP_DIR dumpfile=runs.dmp schemas=ML", "Exp-Dp-pw6"),
    ("sqlldr userid=scott/T1ger-Ld-2 control=metrics.ctl log=metrics.log", "T1ger-Ld-2"),
    ("dgmgrl sys/Dg-Mgr1-pw@prim 'show configuration'", "Dg-Mgr1-pw"),
]
LOGON_MEASURE_HARMLESS: list[str] = [
    "python tools/sqlplus_report.py data/a/b@c",
    "cp runs/exp1/ckpt@best.pt /mnt/out/",
    "git clone git@github.com:org/repo.git",
    "sqlplus -s @scripts/report.sql",
    "sqlplus -s /nolog @scripts/connect.sql",
    "smbclient -N -L //nas",
    "rsync -a user@host:/data/a/b ./b",
    "net use Z: \\\\nas\\share /user:CORP\\alice",
]


# Shapes of credentials seen leaking into job logs in public issue threads (the thread named
# above each), rebuilt with made-up values: rclone -vv reading its S3 remote from the environment
# (seldon-core#4903), a launcher printing args that hold the W&B key (NVIDIA-NeMo/labs-molt#128;
# OpenRLHF's `--use_wandb` is "wandb API key"), signed requests at debug level (vector#6685,
# botocore#2626, aws-sdk-cpp#79), `set -x` echoing a login (kyutai-labs/unmute#190,
# openvino_build_deploy#417), clone URLs with a token as userinfo (kubechecks#460), Ray's
# runtime_env env_vars (ray#40549, SkyRL#135), SageMaker's "Training Env:" dump
# (sagemaker-scikit-learn-container#81), MLflow's basic auth (mlflow#1161, #2765), a command
# object dumped as JSON (cloudstack#10339); look-alikes from the same logs. Split alternately
# into build and held-out rows before anything was changed; measured first with the redactor
# of 2b25d15: build 1/10 leak (`use_wandb='<40 hex>'`), held-out 1/10 (botocore's
# `'X-Amz-Security-Token': b'...'`: a bytes repr, whose `b` was taken for the value; the same
# let `{'password': b'...'}` through), 0/11 and 0/11 look-alikes destroyed. The fixes
# (parsers/redact_rules: OpenRLHF's key name, string-literal prefixes) were made looking at
# both, so the held-out half is no longer blind: after, 0/10 and 0/10, 0/11 and 0/11.
GH = with_checksum("ghp_", "Tq8vNw2KxL5mRb7YcZ3pHd9FsJ4gAe")
THREAD_SECRETS: list[tuple[str, str]] = [
 # seldon-core#4903: rclone -vv in an init container reads its S3 remote from the environment
 ('2024/05/01 12:00:13 DEBUG : Setting secret_access_key="q9Zt2Lm8Rk4Wv7Nc1Xb5Hs3Pd6Gf0Jy2Ue8Ta4Qw" for "s3" from environment variable RCLONE_CONFIG_S3_SECRET_ACCESS_KEY',
  "q9Zt2Lm8Rk4Wv7Nc1Xb5Hs3Pd6Gf0Jy2Ue8Ta4Qw"),
 ('2024/05/01 12:00:13 DEBUG : Setting access_key_id="AKIAZ7Q3M5N2K8W4R6TY" for "s3" from environment variable RCLONE_CONFIG_S3_ACCESS_KEY_ID',
  "AKIAZ7Q3M5N2K8W4R6TY"),
 # NVIDIA-NeMo/labs-molt#128: the launcher prints its whole args, the W&B key (40 hex) among them
 ("Namespace(pretrain='Qwen/Qwen2.5-1.5B', micro_train_batch_size=4, use_wandb='3f9a1c7e5b2d8f4a6c0e9b1d7f3a5c8e2b4d6f10', wandb_project='rl', seed=42)",
  "3f9a1c7e5b2d8f4a6c0e9b1d7f3a5c8e2b4d6f10"),
 ("{'logger': {'wandb': {'key': '8c2e4a6b0d1f3e5a7c9b2d4f6a8c0e1b3d5f7a92', 'project': 'sft'}}, 'lr': 1e-05}",
  "8c2e4a6b0d1f3e5a7c9b2d4f6a8c0e1b3d5f7a92"),
 # vector#6685, aws-sdk-cpp#79: a signed request's headers at debug level
 ('DEBUG http: Sending HTTP request. uri=https://logs.us-east-1.amazonaws.com/ method=POST headers={"authorization": "AWS4-HMAC-SHA256 Credential=AKIAQ4R7T2W9Y3U6I8OP/20240501/us-east-1/logs/aws4_request, SignedHeaders=content-type;host;x-amz-date, Signature=7d1e3a5c9b2f4d6e8a0c1b3d5f7e9a2c4b6d8f0e1a3c5b7d9f2e4a6c8b0d1f3e", "content-length": "55"}',
  "7d1e3a5c9b2f4d6e8a0c1b3d5f7e9a2c4b6d8f0e1a3c5b7d9f2e4a6c8b0d1f3e"),
 # botocore#2626: the AWSPreparedRequest repr at debug level, session token included
 ("2024-05-01 12:00:03|DEBUG|endpoint:236|_do_get_response(): Sending http request: <AWSPreparedRequest stream_output=False, method=POST, url=https://sts.amazonaws.com/, headers={'X-Amz-Date': b'20240501T120003Z', 'X-Amz-Security-Token': b'IQoJb3JpZ2luX2VjEHcaCXVzLWVhc3QtMSJGMEQCIFz8Qw3Rt5Yu7Io9Pa1Sd3Fg5Hj7Kl9Zx1Cv3Bn5Mq', 'Authorization': b'AWS4-HMAC-SHA256 Credential=ASIAX5C7V9B2N4M6Q8WE/20240501/us-east-1/sts/aws4_request, SignedHeaders=host;x-amz-date, Signature=0a2c4e6b8d1f3a5c7e9b0d2f4a6c8e1b3d5f7a9c0e2b4d6f8a1c3e5b7d9f0a2c'}>",
  "IQoJb3JpZ2luX2VjEHcaCXVzLWVhc3QtMSJGMEQCIFz8Qw3Rt5Yu7Io9Pa1Sd3Fg5Hj7Kl9Zx1Cv3Bn5Mq"),
 ("Response body:\n<GetSessionTokenResult>\n    <Credentials>\n      <AccessKeyId>ASIAW3E5R7T9Y2U4I6OP</AccessKeyId>\n      <SecretAccessKey>Jx7Kc2Vb9Nm4Lq1Wz8Rt5Yp3Hs6Dg0Fa2Ue7Io4Q</SecretAccessKey>\n      <SessionToken>FwoGZXIvYXdzEBYaDHh3Jk9Lq2Wz8Rt5Yp3Hs6Dg0Fa2Ue7Io4Q</SessionToken>",
  "Jx7Kc2Vb9Nm4Lq1Wz8Rt5Yp3Hs6Dg0Fa2Ue7Io4Q"),
 # moshi-server / openvino PRs: `set -x` echoes the login with the token expanded
 ("+ uvx --from 'huggingface_hub[cli]' hf auth login --token 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",
  "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"),
 ("++ huggingface-cli login --token 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 --add-to-git-credential",
  "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"),
 # kubechecks#460 (masked there; unmasked in others): a clone URL with the token as userinfo
 ('12:41PM DBG building command args=["clone","https://x-access-token:' + GH + '@github.com/org/repo.git"]', GH),
 ("Cloning https://" + GH + "@github.com/org/private-utils.git to /tmp/pip-req-build-k2j4", GH),
 # ray#40549, SkyRL#135: runtime_env env_vars shown in the job's log and dashboard
 ("Job submitted with runtime_env={'env_vars': {'WANDB_API_KEY': '5e7a9c1b3d5f7e9a1c3b5d7f9e1a3c5b7d9f1e3a', 'MLFLOW_TRACKING_TOKEN': 'dapi2f4a6c8e0b1d3f5a7c9e2b4d6f8a1c3e5b'}, 'working_dir': '.'}",
  "5e7a9c1b3d5f7e9a1c3b5d7f9e1a3c5b7d9f1e3a"),
 ("Job submitted with runtime_env={'env_vars': {'WANDB_API_KEY': '5e7a9c1b3d5f7e9a1c3b5d7f9e1a3c5b7d9f1e3a', 'MLFLOW_TRACKING_TOKEN': 'dapi2f4a6c8e0b1d3f5a7c9e2b4d6f8a1c3e5b'}, 'working_dir': '.'}",
  "dapi2f4a6c8e0b1d3f5a7c9e2b4d6f8a1c3e5b"),
 # aws/sagemaker-scikit-learn-container#81: the toolkit prints "Training Env:" JSON, hyperparameters and all
 ('awdf0ih87h-algo-1-wi5k2 |     "hyperparameters": {"epochs": 3, "hf_token": "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", "model_id": "gpt2"},',
  "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"),
 ('awdf0ih87h-algo-1-wi5k2 | SM_HP_DB_PASSWORD=Tr4in-Db-Pw-2024',
  "Tr4in-Db-Pw-2024"),
 # mlflow#1161/#2765: basic-auth env for the tracking server, echoed by a launcher's env dump
 ("MLFLOW_TRACKING_USERNAME=ml-runner MLFLOW_TRACKING_PASSWORD=Mlfl0w-R4nner-Pw MLFLOW_TRACKING_URI=https://mlflow.internal",
  "Mlfl0w-R4nner-Pw"),
 ("mlflow.exceptions.MlflowException: API request to https://runner:Mlfl0w-R4nner-Pw@mlflow.internal/api/2.0/mlflow/runs/create failed with exception HTTPSConnectionPool",
  "Mlfl0w-R4nner-Pw"),
 # cloudstack#10339: a command object dumped as JSON at debug level
 ('      "accessKey": "AKIAP2O4I6U8Y1T3R5EW",\n      "secretKey": "Vb3Nm8Qw1Er6Ty4Ui9Op2As7Df5Gh0Jk3Lz8Xc1V",\n      "endPoint": "http://minio.storage:9000",',
  "Vb3Nm8Qw1Er6Ty4Ui9Op2As7Df5Gh0Jk3Lz8Xc1V"),
 # wandb.login(key=...) in a traceback's code line (a frame prints its source line)
 ('  File "/workspace/train.py", line 12, in <module>\n    wandb.login(key="0b1d3f5a7c9e2b4d6f8a1c3e5b7d9f0a2c4e6b8d")\n  File "/usr/lib/python3/site-packages/wandb/sdk/wandb_login.py", line 80, in login',
  "0b1d3f5a7c9e2b4d6f8a1c3e5b7d9f0a2c4e6b8d"),
 # an HF hub error quoting the header it sent (proxies and debug logging do)
 ("huggingface_hub.errors.HfHubHTTPError: 401 Client Error: Unauthorized for url: https://huggingface.co/api/models/org/private (Request ID: Root=1-6632) headers={'authorization': 'Bearer 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'}",
  "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"),
]
THREAD_HARMLESS: list[str] = [
 'wandb: ERROR api_key not configured (no-tty). call wandb.login(key=[your_api_key])',
 'wandb.errors.errors.UsageError: api_key not configured (no-tty). call wandb.login(key=[your_api_key])',
 '2024/05/01 12:00:13 DEBUG : Setting env_auth="false" for "s3" from environment variable RCLONE_CONFIG_S3_ENV_AUTH',
 '2024/05/01 12:00:13 DEBUG : Setting provider="minio" for "s3" from environment variable RCLONE_CONFIG_S3_PROVIDER',
 '12:41PM DBG Token Length - 41',
 '12:41PM INF ArgoCD client configuration auth-token=243',
 'Automatic Weights & Biases logging enabled, to disable set os.environ["WANDB_DISABLED"] = "true"',
 'INFO Exporting wandb api key to ray runtime env',
 'requests.exceptions.HTTPError: 401 Client Error: Unauthorized for url: https://huggingface.co/meta-llama/Llama-2-7b-chat-hf/resolve/main/config.json',
 'SignedHeaders=content-type;host;x-amz-content-sha256;x-amz-date;x-amz-target',
 '"x-amz-content-sha256": "e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855"',
 '    "checksum": "6bb8edf3c062ed5625a3a8f17b3eedc9",',
 '      "accessKey": "<redacted>",',
 'Your token has been saved in your configured git credential helpers (store).',
 'Enter your token (input will not be visible): ',
 'wandb: Using wandb-core as the SDK backend.  Please refer to https://wandb.me/wandb-core for more information.',
 "fatal: could not read Username for 'https://github.com': No such device or address",
 'awdf0ih87h-algo-1-wi5k2 |     "channel_input_dirs": {"train": "/opt/ml/input/data/train"},',
 'MLFLOW_TRACKING_URI=http://localhost:5000 MLFLOW_EXPERIMENT_NAME=llama',
 "Namespace(pretrain='Qwen/Qwen2.5-1.5B', use_wandb=None, wandb_project='rl', max_len=2048, seed=42)",
 "{'logger': {'wandb': {'key': None, 'project': 'sft'}}, 'tokenizer': {'pad_token': '<|endoftext|>'}}",
 "Repository Not Found for url: https://huggingface.co/api/models/org/private. Please make sure you specified the correct `repo_id` and `repo_type`. If you are trying to access a private or gated repo, make sure you are authenticated.",
]
THREAD_BUILD = (THREAD_SECRETS[0::2], THREAD_HARMLESS[0::2])
THREAD_HELD_OUT = (THREAD_SECRETS[1::2], THREAD_HARMLESS[1::2])


def main() -> None:
    """Leaks and destroyed look-alikes of a redactor on the corpus and the measure set:
    `python tests/secrets_corpus.py [--redactor FILE]` (FILE: a redact.py of another commit,
    `git show <commit>:parsers/redact.py > /tmp/old_redact.py`; default: this checkout's)."""
    import argparse
    import importlib.util
    import sys

    ap = argparse.ArgumentParser(description=main.__doc__)
    ap.add_argument("--redactor", help="a redact.py to load instead of gangscope.parsers.redact")
    ap.add_argument("-v", action="store_true", help="print each leak and each look-alike lost")
    args = ap.parse_args()
    if args.redactor:
        spec = importlib.util.spec_from_file_location("other_redact", args.redactor)
        module = importlib.util.module_from_spec(spec)
        sys.modules["other_redact"] = module  # dataclasses look their module up
        spec.loader.exec_module(module)
    else:
        from gangscope.parsers import redact as module
    r = module.Redactor()
    sets = {"corpus": ([(t, s) for _n, t, s in corpus()], HARMLESS), "measure": (MEASURE_SECRETS, MEASURE_HARMLESS),
            "harvested": (HARVESTED_SECRETS, HARVESTED_HARMLESS),
            "logon build": (LOGON_BUILD_SECRETS, LOGON_BUILD_HARMLESS),
            "logon measure": (LOGON_MEASURE_SECRETS, LOGON_MEASURE_HARMLESS),
            "threads build": THREAD_BUILD, "threads held-out": THREAD_HELD_OUT}
    for name, (secrets, harmless) in sets.items():
        leaks = [r.text(t) for t, s in secrets if s in r.text(t)]
        lost = [(h, r.text(h)) for h in harmless if r.text(h) != h]
        print(f"{name}: {len(leaks)}/{len(secrets)} secrets leak, {len(lost)}/{len(harmless)} look-alikes destroyed")
        if args.v:
            for out in leaks:
                print("  leak:", out[:160])
            for h, out in lost:
                print("  lost:", h, "->", out[:160])


if __name__ == "__main__":
    main()
