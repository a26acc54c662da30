//! Real `nats-server` processes for tests and benchmarks: started on free 127.0.0.1 ports with a
//! max payload above 1 MiB, waited for, and killed when the guard drops. Only loopback.
#![allow(dead_code)]

use std::io::{BufRead, BufReader, Write};
use std::net::{TcpListener, TcpStream};
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

/// Max payload the test servers allow: 2 MiB (the binding needs at least 1 MiB).
pub const MAX_PAYLOAD: usize = 2 * 1024 * 1024;

/// The `nats-server` binary: on PATH, or Debian's `/usr/sbin/nats-server`.
pub fn binary() -> PathBuf {
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
    _dir: tempfile::TempDir,
}

impl NatsServer {
    /// A single server on a free port.
    pub fn start() -> NatsServer {
        NatsServer::start_with(free_port(), None, &[])
    }

    /// A server on `port`, with a cluster listener on `cluster_port` and routes to `routes`
    /// (cluster ports of the other servers).
    pub fn start_with(port: u16, cluster_port: Option<u16>, routes: &[u16]) -> NatsServer {
        let dir = tempfile::tempdir().expect("temp dir");
        let config = dir.path().join("nats.conf");
        let mut text =
            format!("listen: 127.0.0.1:{port}\nmax_payload: {MAX_PAYLOAD}\nhttp_port: 0\n",);
        text = text.replace("http_port: 0\n", "");
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
            _dir: dir,
        };
        server.spawn();
        server
    }

    fn spawn(&mut self) {
        let child = Command::new(binary())
            .arg("-c")
            .arg(&self.config)
            .stdout(Stdio::null())
            .stderr(Stdio::null())
            .spawn()
            .unwrap_or_else(|e| {
                panic!(
                    "cannot start {} ({e}); install it with `apt-get install nats-server`",
                    binary().display()
                )
            });
        self.child = Some(child);
        wait_ready(self.port);
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

    /// Starts it again on the same port, with the same configuration.
    pub fn restart(&mut self) {
        self.stop();
        self.spawn();
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

/// Waits (at most 10 s) until the server on `port` sends its INFO line.
fn wait_ready(port: u16) {
    let deadline = Instant::now() + Duration::from_secs(10);
    while Instant::now() < deadline {
        if let Ok(s) = TcpStream::connect(("127.0.0.1", port)) {
            let _ = s.set_read_timeout(Some(Duration::from_secs(1)));
            let mut line = String::new();
            if BufReader::new(&s).read_line(&mut line).is_ok() && line.starts_with("INFO") {
                let mut s = s;
                let _ = s.write_all(b"CONNECT {\"verbose\":false}\r\nPING\r\n");
                return;
            }
        }
        std::thread::sleep(Duration::from_millis(25));
    }
    panic!("nats-server on 127.0.0.1:{port} did not become ready within 10 s");
}

/// A three-server cluster on 127.0.0.1, each routing to the other two.
#[derive(Debug)]
pub struct Cluster {
    pub servers: Vec<NatsServer>,
}

impl Cluster {
    pub fn start() -> Cluster {
        let ports: Vec<u16> = (0..3).map(|_| free_port()).collect();
        let cports: Vec<u16> = (0..3).map(|_| free_port()).collect();
        let servers = (0..3)
            .map(|i| {
                let routes: Vec<u16> = (0..3).filter(|j| *j != i).map(|j| cports[j]).collect();
                NatsServer::start_with(ports[i], Some(cports[i]), &routes)
            })
            .collect();
        Cluster { servers }
    }
}
