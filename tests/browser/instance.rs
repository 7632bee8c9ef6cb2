//! A real `interai serve` process for the browser to visit: its own data directory and SQLite database, a loopback
//! port, an admin actor and an admin-scope key made with the CLI, as an admin following the README would.
//!
//! SQLite only: what a page shows does not depend on the backend (the `it` suite runs every console test on both).

use std::io::BufRead;
use std::process::{Child, Command, Stdio};
use std::sync::mpsc;
use std::time::Duration;

/// How long a server may take to say it is serving (it creates its database and keys first).
const STARTUP_PATIENCE: Duration = Duration::from_secs(60);

/// One served instance.
pub struct ServedInstance {
    /// The realm, which is also the listening address (`127.0.0.1:<port>`).
    pub realm: String,
    /// Where the browser reaches it: `http://127.0.0.1:<port>`.
    pub base_url: String,
    /// The secret of an admin-scope key, for the sign-in form.
    pub admin_key: String,
    data_directory: tempfile::TempDir,
    server: Child,
}

impl ServedInstance {
    /// Starts `interai serve` on a free loopback port and makes an admin key with `interai admin`.
    pub async fn start(admin_name: &str) -> ServedInstance {
        let probe = std::net::TcpListener::bind("127.0.0.1:0").expect("a free port");
        let realm = probe.local_addr().expect("address").to_string();
        drop(probe);
        let data_directory = tempfile::Builder::new()
            .prefix("interai-browser-")
            .tempdir()
            .expect("a data directory");
        let mut server = command(&realm, data_directory.path())
            .arg("serve")
            .stdout(Stdio::null())
            .stderr(Stdio::piped())
            .spawn()
            .expect("interai serve starts");
        let log = server.stderr.take().expect("the server's log");
        let (sender, serving) = mpsc::channel();
        // Reads the log to its end (a full pipe would stall the server), saying once when the server is serving.
        std::thread::spawn(move || {
            let mut told = false;
            for line in std::io::BufReader::new(log).lines().map_while(Result::ok) {
                let event: serde_json::Value = serde_json::from_str(&line).unwrap_or_default();
                if !told && event["fields"]["message"] == "serving" {
                    told = sender.send(()).is_ok();
                }
            }
        });
        let waited = tokio::task::spawn_blocking(move || serving.recv_timeout(STARTUP_PATIENCE))
            .await
            .expect("the wait ends");
        if let Err(error) = waited {
            let _ = server.kill();
            panic!("interai serve on {realm} did not start serving within {STARTUP_PATIENCE:?}: {error}");
        }
        let mut instance = ServedInstance {
            base_url: format!("http://{realm}"),
            realm,
            admin_key: String::new(),
            data_directory,
            server,
        };
        let actor = instance
            .admin(&["actor", "create", "--type", "usr", "--name", admin_name])
            .await;
        let secret = instance
            .admin(&[
                "key",
                "create",
                "--actor",
                actor.trim(),
                "--scopes",
                "admin",
                "--label",
                "browser test",
            ])
            .await;
        instance.admin_key = secret.trim().to_owned();
        instance
    }

    /// Runs `interai admin <arguments>` on this instance beside its server and returns what it printed.
    pub async fn admin(&self, arguments: &[&str]) -> String {
        let output = tokio::process::Command::from(command(&self.realm, self.data_directory.path()))
            .arg("admin")
            .args(arguments)
            .output()
            .await
            .expect("interai admin runs");
        assert!(
            output.status.success(),
            "interai admin {arguments:?} failed: {}",
            String::from_utf8_lossy(&output.stderr)
        );
        String::from_utf8(output.stdout).expect("utf-8")
    }

    /// The URL of `path` on this instance.
    pub fn url(&self, path: &str) -> String {
        format!("{}{path}", self.base_url)
    }
}

impl Drop for ServedInstance {
    fn drop(&mut self) {
        let _ = self.server.kill();
        let _ = self.server.wait();
    }
}

/// `interai` with the settings of an instance at `realm` keeping its data in `data_directory`: plain HTTP and
/// loopback addresses allowed for federation (the two instances peer over loopback), JSON logs.
fn command(realm: &str, data_directory: &std::path::Path) -> Command {
    let mut command = Command::new(env!("CARGO_BIN_EXE_interai"));
    command
        .env("INTERAI_DATA_DIR", data_directory)
        .env(
            "INTERAI_DATABASE_URL",
            format!("sqlite://{}", data_directory.join("interai.db").display()),
        )
        .env("INTERAI_LISTEN", realm)
        .env("INTERAI_REALM", realm)
        .env("INTERAI_FEDERATION_ALLOW_HTTP", "true")
        .env("INTERAI_FEDERATION_ALLOW_PRIVATE", "true")
        .env("INTERAI_LOG", "info")
        .env("INTERAI_LOG_FORMAT", "json");
    command
}
