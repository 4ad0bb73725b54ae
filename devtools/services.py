"""``start --services`` runs the stack production runs, on this machine's Debian PostgreSQL
and Redis, each with its own data and ports under var/services/ (PostgreSQL's in /tmp
when run as root, owned by the postgres user): a PostgreSQL cluster of its own, a broker
Redis and a cache Redis (allkeys-lru), gunicorn with gunicorn.conf.py, a Celery worker
and beat, an SMTP sink that writes each mail it is given to a file of
var/services/mail/, and, when nginx is installed, nginx in front with
deploy/nginx-registry.conf (exports sent by X-Accel-Redirect). The ports follow the web
port P: PostgreSQL P+1, broker Redis P+2, cache Redis P+3, SMTP P+4, and gunicorn P+5
behind nginx (P itself without it). The demo is seeded with its tasks run in-process and
its mail discarded, whatever the broker. One Ctrl-C stops every process.
"""

from __future__ import annotations

import glob
import os
import shutil
import signal
import socketserver
import subprocess
import tempfile
import threading
import time
from dataclasses import dataclass, field
from pathlib import Path

from devtools.base import PYTHON, ROOT, reachable, say, set_up

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


def nginx_temp_paths(home: Path) -> str:
    """An nginx run by a user of its own keeps every temporary file under ``home``."""
    return "\n".join(f"    {kind}_temp_path {home / 'tmp'};"
                     for kind in ("client_body", "proxy", "fastcgi", "uwsgi", "scgi"))


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
{temp_paths}
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
                             "update devtools/services.py's nginx_config")
        text = text.replace(value, ours)
    # As root nginx's workers would drop to nobody, who may not read the exports.
    user = "user root;\n" if root else ""
    return NGINX_CONF.format(user=user, home=NGINX_HOME, logs=SERVICES / "logs",
                             temp_paths=nginx_temp_paths(NGINX_HOME),
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
