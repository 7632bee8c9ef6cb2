//! Two real `interai serve` processes on loopback peer with one command on each side, as the README's "Add a peer"
//! section tells an admin to do. The test waits on each server's log for the activity it expects, never on a timer.

use std::io::BufRead;
use std::process::{Child, Command, Output, Stdio};
use std::sync::mpsc;

use crate::harness::TestDatabase;

/// One instance: its database, its address and its server process.
struct Side {
    database: TestDatabase,
    address: String,
    server: Option<Child>,
    log: Option<mpsc::Receiver<serde_json::Value>>,
}

impl Side {
    async fn new() -> Side {
        // A free port, so that the realm and the public URL can name it before the server starts.
        let probe = std::net::TcpListener::bind("127.0.0.1:0").expect("a free port");
        let address = probe.local_addr().expect("address").to_string();
        drop(probe);
        Side {
            database: TestDatabase::create().await,
            address,
            server: None,
            log: None,
        }
    }

    fn command(&self) -> Command {
        let mut command = Command::new(env!("CARGO_BIN_EXE_interai"));
        command
            .env("INTERAI_DATA_DIR", self.database.directory.path())
            .env("INTERAI_DATABASE_URL", &self.database.url)
            .env("INTERAI_LISTEN", &self.address)
            .env("INTERAI_REALM", &self.address)
            .env("INTERAI_FEDERATION_ALLOW_HTTP", "true")
            .env("INTERAI_FEDERATION_ALLOW_PRIVATE", "true")
            .env("INTERAI_LOG", "info")
            .env("INTERAI_LOG_FORMAT", "json");
        command
    }

    fn admin(&self, arguments: &[&str]) -> String {
        let output: Output = self
            .command()
            .arg("admin")
            .args(arguments)
            .output()
            .expect("admin runs");
        assert!(
            output.status.success(),
            "interai admin {arguments:?} failed: {}",
            String::from_utf8_lossy(&output.stderr)
        );
        String::from_utf8(output.stdout).expect("utf-8")
    }

    /// The fingerprint of the instance's signing key, as its admin would read it out to the other admin.
    fn fingerprint(&self, init: bool) -> String {
        let arguments: &[&str] = if init {
            &["--init", "federation", "identity"]
        } else {
            &["federation", "identity"]
        };
        let identity = self.admin(arguments);
        identity
            .lines()
            .find(|line| line.starts_with("key\t") && line.ends_with("signing"))
            .and_then(|line| line.split('\t').nth(2))
            .expect("a signing key")
            .to_owned()
    }

    fn serve(&mut self) {
        let mut child = self
            .command()
            .arg("serve")
            .stderr(Stdio::piped())
            .spawn()
            .expect("serve starts");
        let stderr = child.stderr.take().expect("stderr");
        let (sender, receiver) = mpsc::channel();
        std::thread::spawn(move || {
            for line in std::io::BufReader::new(stderr).lines().map_while(Result::ok) {
                if let Ok(event) = serde_json::from_str::<serde_json::Value>(&line)
                    && sender.send(event).is_err()
                {
                    return;
                }
            }
        });
        self.server = Some(child);
        self.log = Some(receiver);
        self.wait_for(|event| event["fields"]["message"] == "serving");
    }

    /// Blocks until the server logs an event that `matches` (it logs as it works; a server that dies ends the wait).
    fn wait_for(&self, matches: impl Fn(&serde_json::Value) -> bool) -> serde_json::Value {
        let log = self.log.as_ref().expect("serving");
        loop {
            let event = log.recv().expect("the server is still running and logging");
            if matches(&event) {
                return event;
            }
        }
    }

    fn peer_state(&self, realm: &str) -> String {
        self.admin(&["peer", "list"])
            .lines()
            .find(|line| line.starts_with(&format!("{realm}\t")))
            .and_then(|line| line.split('\t').nth(1))
            .unwrap_or("absent")
            .to_owned()
    }
}

impl Drop for Side {
    fn drop(&mut self) {
        if let Some(mut child) = self.server.take() {
            let _ = child.kill();
            let _ = child.wait();
        }
    }
}

fn processed(event: &serde_json::Value, activity_type: &str) -> bool {
    event["fields"]["message"] == "inbound activity processed" && event["fields"]["activity_type"] == activity_type
}

#[tokio::test]
async fn two_served_instances_peer_with_one_command_on_each_side() {
    let mut alpha = Side::new().await;
    let mut beta = Side::new().await;
    let alpha_fingerprint = alpha.fingerprint(true);
    let beta_fingerprint = beta.fingerprint(true);
    alpha.serve();
    beta.serve();

    // Alpha's admin adds beta with the fingerprint beta's admin read out; the command sends the Follow itself.
    let added = alpha.admin(&[
        "peer",
        "add",
        &format!("http://{}", beta.address),
        "--fingerprint",
        &beta_fingerprint,
    ]);
    assert_eq!(added.trim(), format!("{}\tpending_out", beta.address));
    beta.wait_for(|event| processed(event, "Follow"));
    assert_eq!(beta.peer_state(&alpha.address), "pending_in");

    // A wrong fingerprint pins nothing.
    let refused = beta
        .command()
        .args([
            "admin",
            "peer",
            "approve",
            &alpha.address,
            "--fingerprint",
            "SHA256:wrong",
        ])
        .output()
        .expect("runs");
    assert!(!refused.status.success());

    // Beta's admin approves with alpha's fingerprint; the command sends the Accept itself.
    beta.admin(&["peer", "approve", &alpha.address, "--fingerprint", &alpha_fingerprint]);
    alpha.wait_for(|event| processed(event, "Accept"));
    assert_eq!(alpha.peer_state(&beta.address), "active");
    assert_eq!(beta.peer_state(&alpha.address), "active");

    // A block on beta takes effect for the next request, from a command run beside the server.
    beta.admin(&["peer", "block", &alpha.address, "--reason", "test"]);
    assert!(beta.peer_state(&alpha.address).starts_with("blocked"));
}
