//! Real `nats-server` processes for tests and benchmarks: started on free 127.0.0.1 ports with a
//! max payload above 1 MiB, waited for, and killed when the guard drops. Only loopback.
//!
//! Each server gets a unique `server_name`, and readiness means "this child is alive and the
//! INFO line on its port carries its name": a server that failed to bind its port (taken in the
//! meantime, e.g. by another test's server) is never mistaken for one that started; it is
//! started again on a new port. [`unique_workspace`] gives each test its own workspace id, so
//! tests can never talk to each other even through one server.
#![allow(dead_code)]

use std::io::{BufRead, BufReader, Write};
use std::net::{TcpListener, TcpStream};
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::sync::atomic::{AtomicU64, Ordering};
use std::time::{Duration, Instant};

/// How many ports a server is tried on before the test gives up.
const ATTEMPTS: usize = 5;

static COUNTER: AtomicU64 = AtomicU64::new(0);

/// A name no other server or test of any process on this machine uses now.
fn unique(prefix: &str) -> String {
    let nanos = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map_or(0, |d| d.subsec_nanos());
    format!(
        "{prefix}_{}_{}_{nanos}",
        std::process::id(),
        COUNTER.fetch_add(1, Ordering::Relaxed)
    )
}

/// A workspace id of its own for one test (`ws_<pid>_<n>_<nanos>`).
pub fn unique_workspace() -> String {
    unique("ws")
}

/// Max payload the test servers allow: 2 MiB (the binding needs at least 1 MiB).
pub const MAX_PAYLOAD: usize = 2 * 1024 * 1024;

/// The `nats-server` binary: the one `AGH_NATS_SERVER` names (`cargo xtask test` sets it), else
/// the first on PATH, else Debian's `/usr/sbin/nats-server`.
pub fn binary() -> PathBuf {
    if let Some(named) = std::env::var_os("AGH_NATS_SERVER").filter(|v| !v.is_empty()) {
        return PathBuf::from(named);
    }
    if let Some(path) = std::env::var_os("PATH") {
        for dir in std::env::split_paths(&path) {
            let p = dir.join("nats-server");
            if p.is_file() {
                return p;
            }
        }
    }
    PathBuf::from("/usr/sbin/nats-server")
}

/// A free TCP port on 127.0.0.1 (bound, then released).
pub fn free_port() -> u16 {
    let l = TcpListener::bind("127.0.0.1:0").expect("bind 127.0.0.1:0");
    l.local_addr().expect("local addr").port()
}

/// One running `nats-server`; killed on drop.
#[derive(Debug)]
pub struct NatsServer {
    child: Option<Child>,
    pub port: u16,
    pub cluster_port: Option<u16>,
    config: PathBuf,
    name: String,
    _dir: tempfile::TempDir,
}

impl NatsServer {
    /// A single server on a free port (another one when that port turns out to be taken).
    pub fn start() -> NatsServer {
        let mut errors = Vec::new();
        for _ in 0..ATTEMPTS {
            match NatsServer::try_start_with(free_port(), None, &[]) {
                Ok(s) => return s,
                Err(e) => errors.push(e),
            }
        }
        panic!("nats-server did not start in {ATTEMPTS} attempts: {errors:#?}");
    }

    /// A server on `port`, with a cluster listener on `cluster_port` and routes to `routes`
    /// (cluster ports of the other servers).
    pub fn start_with(port: u16, cluster_port: Option<u16>, routes: &[u16]) -> NatsServer {
        NatsServer::try_start_with(port, cluster_port, routes)
            .unwrap_or_else(|e| panic!("nats-server did not start: {e}"))
    }

    /// [`NatsServer::start_with`], or why it did not start.
    pub fn try_start_with(
        port: u16,
        cluster_port: Option<u16>,
        routes: &[u16],
    ) -> Result<NatsServer, String> {
        let dir = tempfile::tempdir().expect("temp dir");
        let config = dir.path().join("nats.conf");
        let name = unique("agh_test");
        let mut text =
            format!("server_name: {name}\nlisten: 127.0.0.1:{port}\nmax_payload: {MAX_PAYLOAD}\n");
        if let Some(cp) = cluster_port {
            let routes: Vec<String> = routes
                .iter()
                .map(|r| format!("nats-route://127.0.0.1:{r}"))
                .collect();
            text.push_str(&format!(
                "cluster {{\n  name: agh_test\n  listen: 127.0.0.1:{cp}\n  routes: [{}]\n}}\n",
                routes.join(", ")
            ));
        }
        std::fs::write(&config, text).expect("write nats config");
        let mut server = NatsServer {
            child: None,
            port,
            cluster_port,
            config,
            name,
            _dir: dir,
        };
        server.spawn()?;
        Ok(server)
    }

    fn spawn(&mut self) -> Result<(), String> {
        let child = Command::new(binary())
            .arg("-c")
            .arg(&self.config)
            .stdout(Stdio::null())
            .stderr(Stdio::null())
            .spawn()
            .unwrap_or_else(|e| {
                panic!(
                    "cannot start {} ({e}); run the tests with `cargo xtask test` (it installs \
                     one), install it with `apt-get install nats-server`, or name one in \
                     AGH_NATS_SERVER",
                    binary().display()
                )
            });
        self.child = Some(child);
        let ready = match self.child.as_mut() {
            Some(child) => wait_ready(child, self.port, &self.name),
            None => Err("no child".to_owned()),
        };
        if ready.is_err() {
            self.stop();
        }
        ready
    }

    /// `nats://127.0.0.1:<port>`.
    pub fn url(&self) -> String {
        format!("nats://127.0.0.1:{}", self.port)
    }

    /// Kills the server (connections drop).
    pub fn stop(&mut self) {
        if let Some(mut c) = self.child.take() {
            let _ = c.kill();
            let _ = c.wait();
        }
    }

    /// Starts it again on the same port, with the same configuration (retried a few times
    /// should the port be briefly unavailable).
    pub fn restart(&mut self) {
        self.stop();
        let mut errors = Vec::new();
        for _ in 0..ATTEMPTS {
            match self.spawn() {
                Ok(()) => return,
                Err(e) => errors.push(e),
            }
        }
        panic!("nats-server did not restart on its port: {errors:#?}");
    }

    pub fn config_path(&self) -> &Path {
        &self.config
    }
}

impl Drop for NatsServer {
    fn drop(&mut self) {
        self.stop();
    }
}

/// Waits (at most 10 s) until `child` is ready: still running, and the INFO line on `port`
/// names it (`server_name`). An exited child (its port was taken) is an error at once.
fn wait_ready(child: &mut Child, port: u16, name: &str) -> Result<(), String> {
    let deadline = Instant::now() + Duration::from_secs(10);
    let needle = format!("\"server_name\":\"{name}\"");
    while Instant::now() < deadline {
        if let Ok(Some(status)) = child.try_wait() {
            return Err(format!(
                "nats-server for 127.0.0.1:{port} exited ({status}): port taken?"
            ));
        }
        if let Ok(s) = TcpStream::connect(("127.0.0.1", port)) {
            let _ = s.set_read_timeout(Some(Duration::from_secs(1)));
            let mut line = String::new();
            if BufReader::new(&s).read_line(&mut line).is_ok() && line.starts_with("INFO") {
                if !line.contains(&needle) {
                    return Err(format!(
                        "127.0.0.1:{port} is another server's (not {name}): port taken"
                    ));
                }
                let mut s = s;
                let _ = s.write_all(b"CONNECT {\"verbose\":false}\r\nPING\r\n");
                return Ok(());
            }
        }
        // Polling a port that has no event to await; bounded by the deadline.
        std::thread::sleep(Duration::from_millis(25));
    }
    Err(format!(
        "nats-server on 127.0.0.1:{port} did not become ready within 10 s"
    ))
}

/// A three-server cluster on 127.0.0.1, each routing to the other two.
#[derive(Debug)]
pub struct Cluster {
    pub servers: Vec<NatsServer>,
}

impl Cluster {
    /// Three servers on free ports (all on new ports again when one of them cannot start).
    pub fn start() -> Cluster {
        let mut errors = Vec::new();
        for _ in 0..ATTEMPTS {
            let ports: Vec<u16> = (0..3).map(|_| free_port()).collect();
            let cports: Vec<u16> = (0..3).map(|_| free_port()).collect();
            let servers: Result<Vec<NatsServer>, String> = (0..3)
                .map(|i| {
                    let routes: Vec<u16> = (0..3).filter(|j| *j != i).map(|j| cports[j]).collect();
                    NatsServer::try_start_with(ports[i], Some(cports[i]), &routes)
                })
                .collect();
            match servers {
                Ok(servers) => return Cluster { servers },
                Err(e) => errors.push(e),
            }
        }
        panic!("the cluster did not start in {ATTEMPTS} attempts: {errors:#?}");
    }
}
