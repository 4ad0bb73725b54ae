#!/usr/bin/env python3
"""The project's two commands, needing nothing but Python 3.11:

    python3 dev.py start [ADDRESS]  # venv + install + migrate + real registry + demo + serve
    python3 dev.py start --services [ADDRESS]  # the same on a production-like stack
    python3 dev.py test    # venv + install + the whole test suite
    python3 dev.py lock [--check]  # compile pyproject.toml into the hashed lock files

``start`` runs on the embedded default (SQLite, Celery eager, console mail)
unless DATABASE_URL etc. are set; ADDRESS is ``host:port`` or a port (default
127.0.0.1:8000), and links in mail use it unless SITE_URL is set, from the server
and from manage.py commands run in this checkout (it is recorded in .dev-site-url). ``test`` uses
PostgreSQL on 127.0.0.1:5432 and Redis on 127.0.0.1:6379 when they answer (and
insists on them when CI=true); elsewhere it runs on SQLite and the PostgreSQL-only
tests are skipped with a printed reason. Extra arguments after ``test`` go to pytest.

``start --services`` runs the stack production runs, on this machine's Debian PostgreSQL
and Redis, each with its own data and ports under var/services/ (PostgreSQL's in /tmp
when run as root, owned by the postgres user): a PostgreSQL cluster of its own, a broker
Redis and a cache Redis (allkeys-lru), gunicorn with gunicorn.conf.py, a Celery worker
and beat, an SMTP sink that writes each mail it is given to a file of
var/services/mail/, and, when nginx is installed, nginx in front with
deploy/nginx-registry.conf (exports sent by X-Accel-Redirect). The ports follow the web
port P: PostgreSQL P+1, broker Redis P+2, cache Redis P+3, SMTP P+4, and gunicorn P+5
behind nginx (P itself without it). The demo is seeded with its tasks run in-process and
its mail discarded, whatever the broker. One Ctrl-C stops every process.

Dependencies are declared once, in pyproject.toml; ``lock`` compiles them with pip-tools
into requirements.txt (what runs) and requirements-dev.txt (that and the dev extra), every
package pinned with its hashes. ``start`` and ``test`` install from those files only, and
``test`` removes whatever the lock does not name, so the tested environment is the lock's.
``lock --check`` fails when pyproject.toml changed after the lock was compiled.

The URN toolkit, urn8141, is this repository's toolkit/, a package of its own that the
project depends on by path: the locks pin and hash its dependencies but not itself (pip
cannot hash a directory), and ``start`` and ``test`` install it from the checkout after
the lock (editable, no dependencies), which builds its C path where a C compiler is.
"""

from __future__ import annotations

import glob
import hashlib
import json
import os
import shutil
import signal
import socket
import socketserver
import subprocess
import sys
import tempfile
import threading
import time
import tomllib
import venv
from dataclasses import dataclass, field
from pathlib import Path

ROOT = Path(__file__).resolve().parent
VENV = ROOT / ".venv"
BIN = VENV / ("Scripts" if os.name == "nt" else "bin")
PYTHON = BIN / ("python.exe" if os.name == "nt" else "python")
TOOLKIT = ROOT / "toolkit"
PG_URL = "postgres://postgres@127.0.0.1:5432/urn_registry"
REDIS_URL = "redis://127.0.0.1:6379/0"
# The address ``start`` serves, read by the settings (SITE_URL's default in development)
# so that commands run beside the server build the same links; registry.env names it too.
DEV_SITE_URL_FILE = ".dev-site-url"


def say(text: str) -> None:
    print(f"==> {text}", flush=True)


def run(*args, **kwargs) -> None:
    subprocess.run([str(a) for a in args], check=True, cwd=ROOT, **kwargs)


# Each lock file and the pyproject.toml extras it is compiled with.
LOCKS = {"requirements.txt": (), "requirements-dev.txt": ("dev",)}
INPUTS_LINE = "# inputs sha256: "


def declared_inputs() -> str:
    """A digest of what pyproject.toml declares (dependencies, extras, Python): the lock
    files carry it, so a change that was not compiled into them is seen at once."""
    project = tomllib.loads((ROOT / "pyproject.toml").read_text())["project"]
    declared = {key: project.get(key) for key in
                ("requires-python", "dependencies", "optional-dependencies")}
    return hashlib.sha256(json.dumps(declared, sort_keys=True).encode()).hexdigest()


def stale_locks() -> list[str]:
    digest = declared_inputs()
    stale = []
    for name in LOCKS:
        path = ROOT / name
        if not path.exists() or f"{INPUTS_LINE}{digest}\n" not in path.read_text():
            stale.append(name)
    return stale


def ensure_venv_exists() -> None:
    if sys.version_info < (3, 11):
        sys.exit(f"Python 3.11 or newer is needed; this is {sys.version.split()[0]}.")
    if not PYTHON.exists():
        say(f"creating a virtual environment in {VENV}")
        venv.EnvBuilder(with_pip=True).create(VENV)


def ensure_venv(lock: str, *, exact: bool = False) -> None:
    """Install ``lock`` into .venv with its hashes checked (once per version of the file);
    ``exact`` also removes every package the lock does not name (pip-sync)."""
    ensure_venv_exists()
    digest = hashlib.sha256((ROOT / lock).read_bytes()).hexdigest()[:16]
    stamp = VENV / f".installed-{lock}-{digest}{'-exact' if exact else ''}"
    if stamp.exists():
        return
    say(f"installing {lock}")
    run(PYTHON, "-m", "pip", "install", "--quiet", "--disable-pip-version-check",
        "--require-hashes", "--no-deps", "-r", lock)
    if exact:
        run(BIN / "pip-sync", "--quiet", "--pip-args", "--require-hashes --no-deps", lock)
    for old in VENV.glob(".installed-*"):
        old.unlink()
    stamp.touch()


def lock(argv: list[str]) -> int:
    """Compile pyproject.toml into the lock files, or with --check say which are stale."""
    if argv == ["--check"]:
        stale = stale_locks()
        for name in stale:
            print(f"{name} is stale: pyproject.toml changed since it was compiled; "
                  "run `python3 dev.py lock`.", flush=True)
        return 1 if stale else 0
    if (ROOT / "requirements-dev.txt").exists():
        ensure_venv("requirements-dev.txt")
    else:  # the very first lock: pip-tools from the registry, to compile the rest
        ensure_venv_exists()
        run(PYTHON, "-m", "pip", "install", "--quiet", "pip-tools")
    digest = declared_inputs()
    for name, extras in LOCKS.items():
        say(f"compiling {name}")
        run(BIN / "pip-compile", "--quiet", "--strip-extras", "--generate-hashes",
            "--allow-unsafe", "--no-emit-index-url", "--no-emit-find-links", "--no-header",
            *(f"--extra={extra}" for extra in extras), "--output-file", name, "pyproject.toml")
        path = ROOT / name
        body = without_local_paths(path.read_text())
        path.write_text(f"# Compiled from pyproject.toml by `python3 dev.py lock`: do not edit.\n"
                        f"{INPUTS_LINE}{digest}\n{TOOLKIT_LINE}{body}")
    runtime, development = (pins(ROOT / name) for name in LOCKS)
    differ = {name for name in runtime if development.get(name) != runtime[name]}
    if differ:
        print(f"the two locks pin {sorted(differ)} differently; run lock again", flush=True)
        return 1
    return 0


TOOLKIT_LINE = ("# urn8141 (toolkit/, this repository's URN toolkit) is installed after this "
                "file:\n#   pip install --no-deps --no-build-isolation ./toolkit\n")
_PIP_TOOLS_WARNING = ("# WARNING: pip install will require the following package to be hashed.",
                      "# Consider using a hashable URL like")


def without_local_paths(body: str) -> str:
    """The compiled lock without the requirements on this repository's own directories
    (``file:toolkit``) and pip-tools' warning about them: pip cannot hash a directory,
    and one unhashed line would make ``pip install -r`` refuse the whole file."""
    kept: list[str] = []
    skipping = False
    for line in body.splitlines(keepends=True):
        if line.startswith("file:"):
            skipping = True
            continue
        if skipping and line.startswith("    #"):
            continue
        skipping = False
        if not line.startswith(_PIP_TOOLS_WARNING):
            kept.append(line)
    return "".join(kept)


def pins(path: Path) -> dict[str, str]:
    pinned = {}
    for line in path.read_text().splitlines():
        if "==" in line and not line.startswith((" ", "#")):
            name, version = line.split(" ")[0].split("==")
            pinned[name.lower()] = version
    return pinned


def reachable(host: str, port: int) -> bool:
    try:
        with socket.create_connection((host, port), timeout=1.5):
            return True
    except OSError:
        return False


def manage(*args: str, env=None) -> None:
    run(PYTHON, "manage.py", *args, env=env)


def serving_address(argv: list[str]) -> str:
    """``host:port`` from the command line: "8160" means 127.0.0.1:8160."""
    address = argv[0] if argv else "127.0.0.1:8000"
    return f"127.0.0.1:{address}" if address.isdigit() else address


def ensure_toolkit() -> None:
    """The URN toolkit (toolkit/, urn8141) installed from the checkout, editable, after
    the lock (which holds its dependencies): again whenever what its build reads changes.
    setuptools builds its C path in place where a C compiler is (optional: without it the
    Python path gives the same answers); CI's tests insist on it."""
    inputs = hashlib.sha256()
    for name in ("pyproject.toml", "setup.py", "src/urn8141/_speedups.c"):
        inputs.update((TOOLKIT / name).read_bytes())
    stamp = VENV / f".installed-toolkit-{inputs.hexdigest()[:16]}"
    if stamp.exists():
        return
    say("installing the URN toolkit (toolkit/) and building its C path")
    for built in (TOOLKIT / "src" / "urn8141").glob("_speedups*.*"):
        if built.suffix in (".so", ".pyd"):  # a server running keeps the copy it loaded
            built.unlink()
    run(PYTHON, "-m", "pip", "install", "--quiet", "--disable-pip-version-check", "--no-deps",
        "--no-build-isolation", "--editable", TOOLKIT)
    for old in VENV.glob(".installed-toolkit-*"):
        old.unlink()
    stamp.touch()


def start(argv: list[str]) -> None:
    services = "--services" in argv
    rest = [arg for arg in argv if arg != "--services"]
    if len(rest) > 1 or any(arg.startswith("-") for arg in rest):
        sys.exit("usage: python3 dev.py start [--services] [ADDRESS]")
    ensure_venv("requirements.txt")
    ensure_toolkit()
    address = serving_address(rest)
    if services:
        sys.exit(run_services(address))
    env = dict(os.environ)
    # Links in mail point where this server answers, unless SITE_URL says otherwise; and
    # so do the links of a command run beside it (manage.py reads the address recorded).
    env.setdefault("SITE_URL", f"http://{address}")
    (ROOT / DEV_SITE_URL_FILE).write_text(env["SITE_URL"] + "\n", encoding="utf-8")
    set_up(env)
    say(f"links in mail use {env['SITE_URL']}, from manage.py commands run here too")
    say(f"serving on http://{address}/  (Ctrl-C stops it)")
    os.execve(str(PYTHON), [str(PYTHON), "manage.py", "runserver", address], env)


def seeding_env(env: dict[str, str]) -> dict[str, str]:
    """The demo's seeding keeps its mail local whatever the broker: its tasks run in
    this process (nothing is queued for a worker) and its mail goes nowhere."""
    return {**env, "LOG_LEVEL": env.get("LOG_LEVEL", "ERROR"),
            "CELERY_TASK_ALWAYS_EAGER": "true",
            "EMAIL_BACKEND": "django.core.mail.backends.dummy.EmailBackend"}


def set_up(env: dict[str, str]) -> None:
    """Migrate, import IANA's registry and the real templates, seed the demo."""
    # Setting up prints what matters, not every task the demo's actions ran.
    quiet = {**env, "LOG_LEVEL": env.get("LOG_LEVEL", "ERROR")}
    manage("migrate", "--noinput", "-v", "0", env=quiet)
    manage("import_registry", env=quiet)
    templates = ROOT.parent / "shared" / "data" / "templates"
    if templates.is_dir():  # the real templates of isbn, xmpp, 3gpp... as their versions
        manage("import_templates", str(templates), env=quiet)
    manage("seed_demo", env=seeding_env(env))


# --- start --services: the production-like stack ------------------------------------

SERVICES = ROOT / "var" / "services"
PORT_OFFSETS = {"postgresql": 1, "broker": 2, "cache": 3, "smtp": 4}
NGINX_APP_OFFSET = 5  # gunicorn's port when nginx answers on the web port


@dataclass
class Process:
    name: str
    argv: list[str]
    env: dict[str, str] = field(default_factory=dict)
    user: str | None = None  # run as this user (PostgreSQL will not run as root)


@dataclass
class Plan:
    """Everything ``start --services`` runs, derived from the web address alone."""
    address: str
    ports: dict[str, int]
    env: dict[str, str]
    processes: list[Process]
    postgres_data: Path
    postgres_user: str | None
    root: bool = False


def postgres_bin(name: str) -> str:
    """A PostgreSQL server program: Debian keeps them off PATH, one directory a version."""
    found = sorted(glob.glob(f"/usr/lib/postgresql/*/bin/{name}"),
                   key=lambda path: int(path.split("/")[4]) if path.split("/")[4].isdigit()
                   else 0)
    return found[-1] if found else (shutil.which(name) or name)


def nginx_binary() -> str | None:
    # Debian's is in /usr/sbin, which a non-root PATH may not hold.
    return shutil.which("nginx") or shutil.which("nginx", path="/usr/sbin")


NGINX_HOME = SERVICES / "nginx"
NGINX_CONF = """daemon off;
{user}worker_processes 2;
pid {home}/nginx.pid;
error_log {logs}/nginx-error.log;
events {{ worker_connections 512; }}
http {{
    include /etc/nginx/mime.types;
    access_log {logs}/nginx-access.log;
    sendfile on;
    client_body_temp_path {home}/tmp;
    proxy_temp_path {home}/tmp;
    fastcgi_temp_path {home}/tmp;
    uwsgi_temp_path {home}/tmp;
    scgi_temp_path {home}/tmp;
    server {{
        listen {address};
{body}
    }}
}}
"""


def nginx_config(app_port: int, address: str, export_root: Path, *, root: bool) -> str:
    """deploy/nginx-registry.conf as production includes it, with this stack's gunicorn
    and EXPORT_ROOT in place of the deployment's, and the scheme the client used (plain
    HTTP here, where production's TLS server says https)."""
    text = (ROOT / "deploy" / "nginx-registry.conf").read_text()
    for value, ours in (("http://urn_registry;", f"http://127.0.0.1:{app_port};"),
                        ("/var/lib/urn-registry/exports/;", f"{export_root}/;"),
                        ("X-Forwarded-Proto https;", "X-Forwarded-Proto $scheme;")):
        if text.count(value) != 1:
            raise SystemExit(f"deploy/nginx-registry.conf no longer has {value!r} once: "
                             "update dev.py's nginx_config")
        text = text.replace(value, ours)
    # As root nginx's workers would drop to nobody, who may not read the exports.
    user = "user root;\n" if root else ""
    return NGINX_CONF.format(user=user, home=NGINX_HOME, logs=SERVICES / "logs",
                             address=address, body=text)


def service_plan(address: str, *, root: bool | None = None,
                 nginx: str | None | bool = True) -> Plan:
    """``nginx``: True finds it (in front when installed), None leaves it out."""
    host, _, port = address.rpartition(":")
    web = int(port)
    ports = {name: web + offset for name, offset in PORT_OFFSETS.items()}
    root = os.geteuid() == 0 if root is None else root
    nginx = nginx_binary() if nginx is True else (nginx or None)
    app = f"127.0.0.1:{web + NGINX_APP_OFFSET}" if nginx else address
    postgres_data = (Path(tempfile.gettempdir()) / f"urn-registry-services-{web}" / "postgres"
                     if root else SERVICES / "postgres")
    postgres_user = "postgres" if root else None
    env = {
        **os.environ,
        "SITE_URL": os.environ.get("SITE_URL", f"http://{address}"),
        "DATABASE_URL": f"postgres://postgres@127.0.0.1:{ports['postgresql']}/urn_registry",
        "REDIS_URL": f"redis://127.0.0.1:{ports['broker']}/0",
        "CELERY_BROKER_URL": f"redis://127.0.0.1:{ports['broker']}/0",
        "CACHE_URL": f"redis://127.0.0.1:{ports['cache']}/0",
        "EMAIL_BACKEND": "django.core.mail.backends.smtp.EmailBackend",
        "EMAIL_HOST": "127.0.0.1",
        "EMAIL_PORT": str(ports["smtp"]),
        "EXPORT_ROOT": str(SERVICES / "exports"),
        "BIND": app,
        "WEB_CONCURRENCY": os.environ.get("WEB_CONCURRENCY", "3"),
        "GUNICORN_CONTROL_SOCKET": str(SERVICES / "gunicorn.ctl"),
    }
    for name in ("CELERY_TASK_ALWAYS_EAGER", "REGISTRY_ENV"):
        env.pop(name, None)
    if nginx:  # nginx in front: its X-Forwarded-For believed, exports sent by it
        env.update({"TRUSTED_PROXIES": "127.0.0.1", "EXPORT_ACCEL_REDIRECT": "/_exports/"})
    redis = shutil.which("redis-server") or "redis-server"
    celery = [str(PYTHON), "-m", "celery", "-A", "registry.celery"]
    processes = [
        Process("postgresql", [postgres_bin("postgres"), "-D", str(postgres_data),
                               "-p", str(ports["postgresql"]), "-c", "listen_addresses=127.0.0.1",
                               "-c", f"unix_socket_directories={postgres_data}"],
                user=postgres_user),
        Process("broker", [redis, "--port", str(ports["broker"]), "--bind", "127.0.0.1",
                           "--dir", str(SERVICES / "broker"), "--appendonly", "yes",
                           "--save", "", "--maxmemory-policy", "noeviction"]),
        Process("cache", [redis, "--port", str(ports["cache"]), "--bind", "127.0.0.1",
                          "--dir", str(SERVICES / "cache"), "--save", "", "--appendonly", "no",
                          "--maxmemory", "128mb", "--maxmemory-policy", "allkeys-lru"]),
        Process("web", [str(PYTHON), "-m", "gunicorn", "-c", "gunicorn.conf.py"], env),
        Process("worker", [*celery, "worker", "--loglevel", "INFO", "--concurrency", "2"], env),
        Process("beat", [*celery, "beat", "--loglevel", "INFO",
                         "--schedule", str(SERVICES / "celerybeat-schedule")], env),
    ]
    if nginx:
        ports["gunicorn"] = web + NGINX_APP_OFFSET
        processes.append(Process("nginx", [nginx, "-p", str(NGINX_HOME), "-c",
                                           str(NGINX_HOME / "nginx.conf")]))
    return Plan(address, ports, env, processes, postgres_data, postgres_user, root)


class _SMTPSink(socketserver.StreamRequestHandler):
    """Just enough SMTP (RFC 5321) to take mail: each message into its own file."""

    def reply(self, line: str) -> None:
        self.wfile.write(f"{line}\r\n".encode())

    def handle(self) -> None:
        sender, recipients = "", []
        self.reply("220 urn-registry SMTP sink")
        while line := self.rfile.readline(65536):
            command = line.decode("utf-8", "replace").strip()
            verb = command[:4].upper()
            if verb in ("HELO", "EHLO"):
                self.reply("250 urn-registry")
            elif verb == "MAIL":
                sender, recipients = command[10:].strip(), []
                self.reply("250 OK")
            elif verb == "RCPT":
                recipients.append(command[8:].strip())
                self.reply("250 OK")
            elif verb == "DATA":
                self.reply("354 End data with <CR><LF>.<CR><LF>")
                body = []
                while (data := self.rfile.readline(1 << 20)) not in (b".\r\n", b".\n", b""):
                    body.append(data[1:] if data.startswith(b"..") else data)
                self.server.deliver(sender, recipients, b"".join(body))  # type: ignore
                self.reply("250 OK: written")
            elif verb == "QUIT":
                self.reply("221 Bye")
                return
            elif verb in ("RSET", "NOOP"):
                self.reply("250 OK")
            else:
                self.reply("502 Command not implemented")


class SMTPSink(socketserver.ThreadingTCPServer):
    daemon_threads = True
    allow_reuse_address = True

    def __init__(self, port: int, directory: Path):
        super().__init__(("127.0.0.1", port), _SMTPSink)
        self.directory = directory
        self.count = 0
        self.lock = threading.Lock()
        directory.mkdir(parents=True, exist_ok=True)

    def deliver(self, sender: str, recipients: list[str], message: bytes) -> None:
        with self.lock:
            self.count += 1
            name = f"{time.strftime('%Y%m%d-%H%M%S')}-{os.getpid()}-{self.count:05}.eml"
        envelope = f"X-Envelope-From: {sender}\r\nX-Envelope-To: {', '.join(recipients)}\r\n"
        (self.directory / name).write_bytes(envelope.encode() + message)


def _as(user: str | None) -> list[str]:
    return ["runuser", "-u", user, "--"] if user else []


def _wait_for(port: int, what: str, seconds: float = 30.0) -> None:
    deadline = time.monotonic() + seconds
    while not reachable("127.0.0.1", port):
        if time.monotonic() > deadline:
            raise SystemExit(f"{what} did not answer on port {port} within {seconds:.0f} s; "
                             f"see {SERVICES / 'logs'}")
        time.sleep(0.2)


def _init_postgres(plan: Plan) -> None:
    if (plan.postgres_data / "PG_VERSION").exists():
        return
    say(f"creating a PostgreSQL cluster in {plan.postgres_data}")
    plan.postgres_data.mkdir(parents=True, exist_ok=True)
    if plan.postgres_user:
        shutil.chown(plan.postgres_data, plan.postgres_user)
        shutil.chown(plan.postgres_data.parent, plan.postgres_user)
    subprocess.run([*_as(plan.postgres_user), postgres_bin("initdb"), "-D",
                    str(plan.postgres_data), "-U", "postgres", "--auth=trust", "-E", "UTF8",
                    "--locale=C.UTF-8"], check=True, stdout=subprocess.DEVNULL)


def run_services(address: str) -> int:
    plan = service_plan(address)
    for name in ("logs", "broker", "cache", "exports", "mail"):
        (SERVICES / name).mkdir(parents=True, exist_ok=True)
    busy = [f"{name} {port}" for name, port in {**plan.ports, "web": int(
        address.rpartition(":")[2])}.items() if reachable("127.0.0.1", port)]
    if busy:
        print(f"ports in use: {', '.join(busy)}; pick another web port "
              f"(python3 dev.py start --services 8100)", flush=True)
        return 1
    _init_postgres(plan)
    sink = SMTPSink(plan.ports["smtp"], SERVICES / "mail")
    threading.Thread(target=sink.serve_forever, daemon=True).start()
    running: list[tuple[Process, subprocess.Popen]] = []

    def launch(process: Process) -> None:
        log = (SERVICES / "logs" / f"{process.name}.log").open("ab")
        running.append((process, subprocess.Popen(
            [*_as(process.user), *process.argv], cwd=ROOT, env=process.env or None,
            stdout=log, stderr=subprocess.STDOUT, start_new_session=True)))

    def stop_all() -> None:
        for sig in (signal.SIGINT, signal.SIGTERM):  # a second Ctrl-C: stopping already
            signal.signal(sig, signal.SIG_IGN)
        for process, popen in reversed(running):
            if popen.poll() is not None:
                continue
            if process.name == "postgresql":  # runuser passes no signal on: pg_ctl does
                subprocess.run([*_as(plan.postgres_user), postgres_bin("pg_ctl"), "stop", "-D",
                                str(plan.postgres_data), "-m", "fast", "-s"], check=False)
            else:
                popen.terminate()
        for _process, popen in reversed(running):
            try:
                popen.wait(timeout=30)
            except subprocess.TimeoutExpired:
                popen.kill()
        sink.shutdown()
        say("stopped")

    def interrupted(*_: object) -> None:
        raise KeyboardInterrupt  # SIGTERM (systemd, kill) stops it all as Ctrl-C does

    signal.signal(signal.SIGTERM, interrupted)
    try:
        by_name = {process.name: process for process in plan.processes}
        for name in ("postgresql", "broker", "cache"):
            launch(by_name[name])
            _wait_for(plan.ports[name], name)
        subprocess.run([*_as(plan.postgres_user), postgres_bin("createdb"), "-h", "127.0.0.1",
                        "-p", str(plan.ports["postgresql"]), "-U", "postgres", "urn_registry"],
                       stderr=subprocess.DEVNULL, check=False)  # there already: kept
        set_up(plan.env)
        for name in ("worker", "beat", "web"):
            launch(by_name[name])
        web = int(address.rpartition(":")[2])
        _wait_for(plan.ports.get("gunicorn", web), "gunicorn", 60)
        front = ""
        if "nginx" in by_name:
            (NGINX_HOME / "tmp").mkdir(parents=True, exist_ok=True)
            (NGINX_HOME / "nginx.conf").write_text(nginx_config(
                plan.ports["gunicorn"], address, Path(plan.env["EXPORT_ROOT"]), root=plan.root))
            launch(by_name["nginx"])
            _wait_for(web, "nginx")
            front = (f"nginx :{web} in front (deploy/nginx-registry.conf) of gunicorn "
                     f":{plan.ports['gunicorn']}, ")
        say(f"PostgreSQL :{plan.ports['postgresql']}, Redis broker :{plan.ports['broker']} and "
            f"cache :{plan.ports['cache']}, {front or 'gunicorn, '}a Celery worker and beat; "
            f"logs in {SERVICES / 'logs'}")
        say(f"mail is written to {SERVICES / 'mail'} (an SMTP sink on :{plan.ports['smtp']})")
        say(f"serving on http://{address}/  (Ctrl-C stops it all)")
        while True:
            for process, popen in running:
                if popen.poll() is not None:
                    print(f"{process.name} stopped (exit {popen.returncode}); stopping the "
                          f"rest. See {SERVICES / 'logs' / process.name}.log", flush=True)
                    return 1
            time.sleep(1)
    except KeyboardInterrupt:
        say("stopping")
        return 0
    except SystemExit as exc:  # a part did not start: its message, then the rest stop
        print(exc, flush=True)
        return 1
    finally:
        stop_all()


def test(argv: list[str]) -> int:
    ensure_venv("requirements-dev.txt", exact=True)
    ensure_toolkit()
    env = dict(os.environ)
    in_ci = env.get("CI", "").lower() == "true"
    if not env.get("DATABASE_URL"):
        if reachable("127.0.0.1", 5432):
            env["DATABASE_URL"] = PG_URL
        elif in_ci:
            sys.exit("CI=true but PostgreSQL does not answer on 127.0.0.1:5432.")
    if not env.get("TEST_REDIS_URL"):
        if reachable("127.0.0.1", 6379):
            env["TEST_REDIS_URL"] = REDIS_URL
        elif in_ci:
            sys.exit("CI=true but Redis does not answer on 127.0.0.1:6379.")
    database = env.get("DATABASE_URL", "sqlite (embedded)").split("@")[-1]
    say(f"tests on database {database}; Redis {env.get('TEST_REDIS_URL', 'not available')}")
    # The suite sets its own mail and Celery settings; the embedded defaults stay eager.
    for name in ("CELERY_BROKER_URL", "REDIS_URL", "REGISTRY_ENV"):
        env.pop(name, None)
    result = subprocess.run([str(PYTHON), "-m", "pytest", *argv], cwd=ROOT, env=env)
    if result.returncode == 5:
        print("pytest collected no tests: that is a broken suite, not a pass.", flush=True)
        return 1
    return result.returncode


def main() -> None:
    if len(sys.argv) < 2 or sys.argv[1] not in ("start", "test", "lock"):
        sys.exit(__doc__)
    command, rest = sys.argv[1], sys.argv[2:]
    try:
        if command == "start":
            start(rest)
        else:
            sys.exit(test(rest) if command == "test" else lock(rest))
    except subprocess.CalledProcessError as exc:  # the command said why; no traceback here
        sys.exit(f"`{' '.join(str(a) for a in exc.cmd)}` failed (exit {exc.returncode}).")


if __name__ == "__main__":
    main()
