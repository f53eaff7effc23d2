"""clickhouse.py - a real clickhouse-server for the tests, on loopback.

    with ClickHouse() as ch:          # a fresh server in a fresh temp dir
        ch.query("CREATE TABLE t (x UInt32) ENGINE = Memory")
        ch.insert_json("t", [{"x": 1}, {"x": 2}])
        ch.rows("SELECT x FROM t ORDER BY x")     # [["1"], ["2"]]
        ch.json("SELECT x FROM t ORDER BY x")     # [{"x": 1}, {"x": 2}]
        ch.kill()                                 # SIGKILL, as a crash
        ch.start()                                # the same data dir and port

The server runs in UTC (DateTime text is UTC).  Its config, data and logs live in one temporary directory, removed
when the object is stopped (leaving the with block, or at interpreter exit,
also when a test fails).  Set RINGTRACE_CLICKHOUSE_KEEP=1 to keep it, and
RINGTRACE_CLICKHOUSE_SERVER to use another binary.  Standard library only.
"""

import atexit
import ctypes
import json
import os
import shutil
import signal
import socket
import subprocess
import sys
import tempfile
import time
import urllib.error
import urllib.parse
import urllib.request

DEFAULT_BINARY = "/usr/sbin/clickhouse-server"
INSTALL_LINE = "apt-get install -y clickhouse-server"


class ClickHouseError(Exception):
    """The server could not be started, or a query failed (its message is the server's)."""


def find_binary():
    """The server's path, or ClickHouseError saying how to install it."""
    env = os.environ.get("RINGTRACE_CLICKHOUSE_SERVER")
    candidates = [env] if env else [DEFAULT_BINARY, shutil.which("clickhouse-server")]
    for path in candidates:
        if path and os.access(path, os.X_OK):
            return path
    raise ClickHouseError(
        "clickhouse-server is not installed (%s). Run as root:\n  %s"
        % (env or DEFAULT_BINARY, INSTALL_LINE)
    )


def _die_with_parent():
    """In the child: SIGKILL when the test dies, even by SIGKILL (a ctest timeout)."""
    try:
        ctypes.CDLL(None, use_errno=True).prctl(1, signal.SIGKILL)  # PR_SET_PDEATHSIG
    except (OSError, AttributeError):
        pass


def free_port():
    """A TCP port nobody listens on now, on 127.0.0.1."""
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def tsv_unescape(field):
    """One field of ClickHouse's TabSeparated output, as text."""
    if "\\" not in field:
        return field
    out = []
    i = 0
    escapes = {"t": "\t", "n": "\n", "r": "\r", "0": "\0", "\\": "\\", "'": "'", "b": "\b",
               "f": "\f", "a": "\a", "v": "\v"}
    while i < len(field):
        c = field[i]
        if c == "\\" and i + 1 < len(field):
            out.append(escapes.get(field[i + 1], field[i + 1]))
            i += 2
        else:
            out.append(c)
            i += 1
    return "".join(out)


CONFIG = """<?xml version="1.0"?>
<yandex>
  <logger><level>information</level><log>{dir}/server.log</log>
    <errorlog>{dir}/server.err.log</errorlog><size>100M</size><count>1</count></logger>
  <http_port>{http}</http_port>
  <tcp_port>{tcp}</tcp_port>
  <listen_host>127.0.0.1</listen_host>
  <timezone>UTC</timezone>
  <path>{dir}/data/</path>
  <tmp_path>{dir}/tmp/</tmp_path>
  <user_files_path>{dir}/user_files/</user_files_path>
  <format_schema_path>{dir}/format_schemas/</format_schema_path>
  <users_config>users.xml</users_config>
  <default_profile>default</default_profile>
  <default_database>default</default_database>
  <mark_cache_size>5368709</mark_cache_size>
  <uncompressed_cache_size>8388608</uncompressed_cache_size>
  <max_concurrent_queries>20</max_concurrent_queries>
</yandex>
"""

USERS = """<?xml version="1.0"?>
<yandex>
  <profiles><default><max_memory_usage>2000000000</max_memory_usage></default></profiles>
  <users>
    <default>
      <password>{password}</password>
      <networks><ip>127.0.0.1</ip><ip>::1</ip></networks>
      <profile>default</profile>
      <quota>default</quota>
    </default>
  </users>
  <quotas><default><interval><duration>3600</duration><queries>0</queries><errors>0</errors>
    <result_rows>0</result_rows><read_rows>0</read_rows><execution_time>0</execution_time>
  </interval></default></quotas>
</yandex>
"""


class ClickHouse:
    """One clickhouse-server process of the tests, and the directory it owns."""

    def __init__(self, password="", start=True, start_timeout=60.0, parent=None):
        """parent: where the temporary directory goes (default: the system's; a test's own
        work directory is removed with it even if this process is killed)."""
        self.binary = find_binary()
        self.password = password
        self.start_timeout = start_timeout
        self.dir = tempfile.mkdtemp(prefix="ringtrace-clickhouse.", dir=parent)
        self.http_port = free_port()
        self.tcp_port = free_port()
        self.proc = None
        self._out = None
        for sub in ("data", "tmp", "user_files", "format_schemas"):
            os.makedirs(os.path.join(self.dir, sub))
        with open(os.path.join(self.dir, "config.xml"), "w") as f:
            f.write(CONFIG.format(dir=self.dir, http=self.http_port, tcp=self.tcp_port))
        with open(os.path.join(self.dir, "users.xml"), "w") as f:
            f.write(USERS.format(password=password))
        atexit.register(self.stop)
        # a test stopped by SIGTERM still stops its server and removes the directory
        if signal.getsignal(signal.SIGTERM) is signal.SIG_DFL:
            signal.signal(signal.SIGTERM, lambda *_: sys.exit(143))
        if start:
            self.start()

    # ---- where it is ----
    @property
    def url(self):
        """The HTTP interface, without credentials."""
        return "http://127.0.0.1:%d" % self.http_port

    def url_with_password(self):
        """The HTTP interface with user:password@, as `ringtrace ship --to` takes it."""
        if not self.password:
            return self.url
        return "http://default:%s@127.0.0.1:%d" % (
            urllib.parse.quote(self.password, safe=""), self.http_port)

    @property
    def pid(self):
        return self.proc.pid if self.proc else None

    # ---- the process ----
    def start(self):
        """Start the server (again, after kill(): same data dir, same ports) and wait for SELECT 1."""
        if self.proc and self.proc.poll() is None:
            raise ClickHouseError("clickhouse-server already runs (pid %d)" % self.proc.pid)
        self._out = open(os.path.join(self.dir, "stdout.log"), "ab")
        self.proc = subprocess.Popen(
            [self.binary, "--config-file=" + os.path.join(self.dir, "config.xml")],
            cwd=self.dir, stdin=subprocess.DEVNULL, stdout=self._out, stderr=subprocess.STDOUT,
            start_new_session=True, preexec_fn=_die_with_parent)
        deadline = time.monotonic() + self.start_timeout
        last = "no answer yet"
        while time.monotonic() < deadline:
            if self.proc.poll() is not None:
                raise ClickHouseError("clickhouse-server exited with status %d while starting "
                                      "(config %s/config.xml)\n%s"
                                      % (self.proc.returncode, self.dir, self.log_tail()))
            try:
                if self.query("SELECT 1", timeout=2).strip() == "1":
                    return self
            except (ClickHouseError, OSError) as e:
                last = str(e)
            time.sleep(0.1)
        self.kill()
        raise ClickHouseError("clickhouse-server did not answer SELECT 1 on %s within %.0f s "
                              "(last: %s)\n%s" % (self.url, self.start_timeout, last,
                                                  self.log_tail()))

    def kill(self):
        """SIGKILL the server, as a crash would, and reap it.  The data dir stays."""
        if self.proc and self.proc.poll() is None:
            self.proc.send_signal(signal.SIGKILL)
            self.proc.wait()
        if self._out:
            self._out.close()
            self._out = None

    def stop(self):
        """Stop the server and remove its directory (unless RINGTRACE_CLICKHOUSE_KEEP is set)."""
        if self.proc and self.proc.poll() is None:
            self.proc.terminate()
            try:
                self.proc.wait(timeout=10)
            except subprocess.TimeoutExpired:
                pass
        self.kill()
        if self.dir and os.path.isdir(self.dir):
            if os.environ.get("RINGTRACE_CLICKHOUSE_KEEP"):
                print("clickhouse: kept %s" % self.dir)
            else:
                shutil.rmtree(self.dir, ignore_errors=True)
        self.dir = None

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        self.stop()
        return False

    def log_tail(self, lines=30):
        """The last lines of the server's logs, for an error message."""
        out = []
        for name in ("stdout.log", "server.err.log", "server.log"):
            path = os.path.join(self.dir or "", name)
            try:
                with open(path, "rb") as f:
                    f.seek(0, os.SEEK_END)
                    f.seek(max(0, f.tell() - 16384))
                    text = f.read().decode("utf-8", "replace").splitlines()[-lines:]
            except OSError:
                continue
            if text:
                out.append("---- %s (last %d lines) ----" % (path, len(text)))
                out.extend(text)
        return "\n".join(out) if out else "(the server wrote no log)"

    # ---- queries ----
    def query(self, sql, data=None, timeout=60, settings=None):
        """Run one statement; its output as text.  data (bytes) is POSTed after the query;
        settings (a dict) go in the URL."""
        params = dict(settings or {})
        params["query"] = sql
        if data is None:
            body = b""
        else:
            body = data
        req = urllib.request.Request(self.url + "/?" + urllib.parse.urlencode(params), data=body,
                                     method="POST")
        if self.password:
            req.add_header("X-ClickHouse-User", "default")
            req.add_header("X-ClickHouse-Key", self.password)
        try:
            with urllib.request.urlopen(req, timeout=timeout) as r:
                return r.read().decode("utf-8")
        except urllib.error.HTTPError as e:
            raise ClickHouseError("query failed (HTTP %d): %s\n  %s"
                                  % (e.code, e.read().decode("utf-8", "replace").strip(), sql))
        except urllib.error.URLError as e:
            raise ClickHouseError("%s: %s" % (self.url, e.reason))

    def rows(self, sql):
        """The result as a list of rows, each a list of text fields (TabSeparated)."""
        text = self.query(sql + "\nFORMAT TabSeparated")
        return [[tsv_unescape(f) for f in line.split("\t")] for line in text.splitlines()]

    def value(self, sql):
        """The one field of a one-row, one-column result, as text."""
        rows = self.rows(sql)
        if len(rows) != 1 or len(rows[0]) != 1:
            raise ClickHouseError("expected one value, got %r\n  %s" % (rows, sql))
        return rows[0][0]

    def json(self, sql):
        """The result as a list of dicts (JSONEachRow; 64-bit integers as numbers)."""
        text = self.query(sql + "\nFORMAT JSONEachRow",
                          settings={"output_format_json_quote_64bit_integers": 0})
        return [json.loads(line) for line in text.splitlines() if line]

    def insert_json(self, table, rows):
        """INSERT the rows (dicts) with FORMAT JSONEachRow."""
        data = "".join(json.dumps(r) + "\n" for r in rows).encode("utf-8")
        self.query("INSERT INTO %s FORMAT JSONEachRow" % table, data=data)
