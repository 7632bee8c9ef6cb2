//! A headless Chromium driven over WebDriver (chromedriver, with the fantoccini crate), and what each page says is
//! wrong: Chromium's log for the page, which holds `console.error` calls (source `console-api`), uncaught exceptions
//! (`javascript`), Content-Security-Policy violations (`security`) and resources that failed to load (`network`).
//!
//! The programs are Debian's (`.ci/run` installs them): `/usr/bin/chromium` and `/usr/bin/chromedriver`, or the ones
//! `INTERAI_CHROMIUM` and `INTERAI_CHROMEDRIVER` name. Chromium runs with `--no-sandbox`: CI runs as root, where
//! Chromium's sandbox refuses to start.

use std::io::{BufRead, Write};
use std::path::PathBuf;
use std::process::{Child, Command, Stdio};
use std::sync::mpsc;
use std::time::Duration;

use base64::Engine;
use fantoccini::wd::WebDriverCompatibleCommand;
use fantoccini::{Client, ClientBuilder, Locator};

/// How long chromedriver may take to start, and a page to load after a click or a navigation (a guard against a hang:
/// pages load in milliseconds).
const PATIENCE: Duration = Duration::from_secs(30);

/// How often a wait looks again.
const LOOK_AGAIN: Duration = Duration::from_millis(50);

/// A running chromedriver, which starts one Chromium for each [`Tab`].
pub struct Chromium {
    driver: Child,
    port: u16,
}

impl Chromium {
    /// Starts chromedriver on a free loopback port.
    pub async fn launch() -> Chromium {
        let chromedriver = program("INTERAI_CHROMEDRIVER", "/usr/bin/chromedriver");
        let probe = std::net::TcpListener::bind("127.0.0.1:0").expect("a free port");
        let port = probe.local_addr().expect("address").port();
        drop(probe);
        let mut driver = Command::new(&chromedriver)
            .arg(format!("--port={port}"))
            .stdout(Stdio::piped())
            .stderr(Stdio::null())
            .spawn()
            .unwrap_or_else(|error| panic!("{} does not start: {error}", chromedriver.display()));
        let output = driver.stdout.take().expect("chromedriver's output");
        let (sender, started) = mpsc::channel();
        // Reads chromedriver's output to its end (a full pipe would stall it), saying once when it listens.
        std::thread::spawn(move || {
            let mut told = false;
            for line in std::io::BufReader::new(output).lines().map_while(Result::ok) {
                if !told && line.contains("started successfully") {
                    told = sender.send(()).is_ok();
                }
            }
        });
        let waited = tokio::task::spawn_blocking(move || started.recv_timeout(PATIENCE))
            .await
            .expect("the wait ends");
        if let Err(error) = waited {
            let _ = driver.kill();
            panic!("chromedriver did not start within {PATIENCE:?}: {error}");
        }
        Chromium { driver, port }
    }

    /// A tab in a headless Chromium of its own (its own profile and cookies, as another person's browser would
    /// have), whose log keeps everything the page says.
    pub async fn tab(&self) -> Tab {
        let chromium = program("INTERAI_CHROMIUM", "/usr/bin/chromium");
        let capabilities = serde_json::from_value(serde_json::json!({
            "browserName": "chrome",
            "goog:chromeOptions": {
                "binary": chromium,
                "args": [
                    "--headless",
                    "--no-sandbox",
                    "--disable-gpu",
                    "--disable-dev-shm-usage",
                    // The pages are laid out at a laptop's width; screenshots take the whole page's height.
                    "--window-size=1280,900",
                ],
            },
            "goog:loggingPrefs": { "browser": "ALL" },
        }))
        .expect("capabilities are an object");
        let client = ClientBuilder::new(hyper_util::client::legacy::connect::HttpConnector::new())
            .capabilities(capabilities)
            .connect(&format!("http://127.0.0.1:{}", self.port))
            .await
            .expect("chromedriver starts a Chromium");
        Tab { client }
    }
}

impl Drop for Chromium {
    /// Asks chromedriver to shut down, which closes the browsers it started, then makes sure it is gone.
    fn drop(&mut self) {
        if let Ok(mut connection) = std::net::TcpStream::connect(("127.0.0.1", self.port)) {
            let _ = connection.set_read_timeout(Some(Duration::from_secs(10)));
            let _ = write!(
                connection,
                "GET /shutdown HTTP/1.1\r\nHost: 127.0.0.1:{}\r\nConnection: close\r\n\r\n",
                self.port
            );
            let _ = std::io::Read::read_to_end(&mut connection, &mut Vec::new());
        }
        let _ = self.driver.kill();
        let _ = self.driver.wait();
    }
}

/// The path of a program: the one the variable `variable` names, else `default`.
fn program(variable: &str, default: &str) -> PathBuf {
    let path = std::env::var_os(variable).map_or_else(|| PathBuf::from(default), PathBuf::from);
    assert!(
        path.exists(),
        "no {} (install Debian's `chromium` and `chromium-driver` packages, or name it in {variable})",
        path.display()
    );
    path
}

/// Something a page said was wrong: a SEVERE entry of Chromium's log.
#[derive(Debug, Clone)]
pub struct Problem {
    /// `console-api`, `javascript` (an uncaught exception), `security` (a CSP violation), `network`, …
    pub source: String,
    /// What it said, starting with the URL it is about.
    pub message: String,
}

/// One tab.
pub struct Tab {
    client: Client,
}

impl Tab {
    /// Goes to `url` and waits until it has loaded.
    pub async fn open(&mut self, url: &str) {
        tokio::time::timeout(PATIENCE, self.client.goto(url))
            .await
            .unwrap_or_else(|_| panic!("{url} did not load within {PATIENCE:?}"))
            .unwrap_or_else(|error| panic!("{url} did not load: {error}"));
    }

    /// Fills the fields of the form that `form` selects (text is typed into an input, a select gets its option),
    /// clicks its submit button, and waits for the page that answers.
    pub async fn submit(&mut self, form: &str, fields: &[(&str, &str)]) {
        for (name, value) in fields {
            let selector = format!("{form} [name=\"{name}\"]");
            let Ok(control) = self.client.find(Locator::Css(&selector)).await else {
                panic!("no {selector} on {}", self.path().await);
            };
            if control
                .tag_name()
                .await
                .expect("a tag name")
                .eq_ignore_ascii_case("select")
            {
                control
                    .select_by_value(value)
                    .await
                    .unwrap_or_else(|error| panic!("{selector} has no option {value:?}: {error}"));
            } else {
                // A page may have filled the field in (the value refused last time): empty it, then type.
                control.clear().await.expect("the field empties");
                control.send_keys(value).await.expect("typing into the field");
            }
        }
        self.evaluate("window.interaiBrowserTestOldDocument = true; return null;")
            .await;
        let button = format!("{form} [type=\"submit\"]");
        let Ok(submit) = self.client.find(Locator::Css(&button)).await else {
            panic!("no {button} on {}", self.path().await);
        };
        submit.click().await.expect("the submit button takes the click");
        self.wait_for_the_next_document(&button).await;
    }

    /// Waits until the tab shows a document that has loaded and is not the one a form was submitted from.
    async fn wait_for_the_next_document(&self, after: &str) {
        let waited = tokio::time::timeout(PATIENCE, async {
            loop {
                let loaded = self
                    .client
                    .execute(
                        "return document.readyState === 'complete' && !window.interaiBrowserTestOldDocument;",
                        Vec::new(),
                    )
                    .await;
                // Between two documents there may be none to ask: look again.
                if let Ok(serde_json::Value::Bool(true)) = loaded {
                    return;
                }
                tokio::time::sleep(LOOK_AGAIN).await;
            }
        })
        .await;
        assert!(waited.is_ok(), "no page loaded within {PATIENCE:?} after {after}");
    }

    /// Runs `script` (a function body: it says `return`) in the page and returns what it returned.
    pub async fn evaluate(&self, script: &str) -> serde_json::Value {
        self.client
            .execute(script, Vec::new())
            .await
            .unwrap_or_else(|error| panic!("{script} failed: {error}"))
    }

    /// Runs `script` with `argument` as `arguments[0]` and returns what it returned.
    pub async fn evaluate_with(&self, script: &str, argument: &str) -> serde_json::Value {
        self.client
            .execute(script, vec![serde_json::Value::from(argument)])
            .await
            .unwrap_or_else(|error| panic!("{script} failed: {error}"))
    }

    /// The path (and query) of the page the tab shows.
    pub async fn path(&self) -> String {
        let url = self.client.current_url().await.expect("the current URL");
        match url.query() {
            Some(query) => format!("{}?{query}", url.path()),
            None => url.path().to_owned(),
        }
    }

    /// The text of the first element `selector` selects, as the reader sees it.
    pub async fn text(&self, selector: &str) -> Option<String> {
        let found = self
            .client
            .execute(
                "const element = document.querySelector(arguments[0]); return element && element.innerText;",
                vec![serde_json::Value::from(selector)],
            )
            .await
            .expect("the page answers");
        found.as_str().map(str::to_owned)
    }

    /// The text of every element `selector` selects.
    pub async fn texts(&self, selector: &str) -> Vec<String> {
        let found = self
            .client
            .execute(
                "return Array.from(document.querySelectorAll(arguments[0])).map(element => element.innerText);",
                vec![serde_json::Value::from(selector)],
            )
            .await
            .expect("the page answers");
        serde_json::from_value(found).expect("a list of texts")
    }

    /// Saves a PNG of the whole page (not only the window) as `<name>.png` in [`screenshot_directory`].
    pub async fn screenshot(&self, name: &str) -> PathBuf {
        // WebDriver's screenshot is of the window; the DevTools command chromedriver forwards can take the page.
        let metrics = self.devtools("Page.getLayoutMetrics", serde_json::json!({})).await;
        let size = &metrics["cssContentSize"];
        let shot = self
            .devtools(
                "Page.captureScreenshot",
                serde_json::json!({
                    "format": "png",
                    "captureBeyondViewport": true,
                    "clip": { "x": 0, "y": 0, "width": size["width"], "height": size["height"], "scale": 1 },
                }),
            )
            .await;
        let png = base64::engine::general_purpose::STANDARD
            .decode(shot["data"].as_str().expect("the screenshot's data"))
            .expect("base64");
        assert!(png.starts_with(b"\x89PNG"), "the screenshot of {name} is a PNG");
        let directory = screenshot_directory();
        std::fs::create_dir_all(&directory).expect("the screenshot directory");
        let path = directory.join(format!("{name}.png"));
        std::fs::write(&path, png).expect("the screenshot is saved");
        path
    }

    /// Sends a DevTools command through chromedriver and returns its answer.
    async fn devtools(&self, command: &'static str, parameters: serde_json::Value) -> serde_json::Value {
        self.client
            .issue_cmd(DevTools { command, parameters })
            .await
            .unwrap_or_else(|error| panic!("{command} failed: {error}"))
    }

    /// What the pages said was wrong since this was last asked (chromedriver hands each entry of the log out once).
    pub async fn problems(&mut self) -> Vec<Problem> {
        let entries = self
            .client
            .issue_cmd(BrowserLog)
            .await
            .expect("chromedriver hands out the browser's log");
        entries
            .as_array()
            .into_iter()
            .flatten()
            .filter(|entry| entry["level"] == "SEVERE")
            .map(|entry| Problem {
                source: entry["source"].as_str().unwrap_or_default().to_owned(),
                message: entry["message"].as_str().unwrap_or_default().to_owned(),
            })
            .collect()
    }

    /// Fails the test when a page said anything was wrong since this was last asked.
    pub async fn assert_no_problem(&mut self, page: &str) {
        let problems = self.problems().await;
        assert!(problems.is_empty(), "{page} said something is wrong: {problems:#?}");
    }

    /// Ends the session, which closes its Chromium.
    pub async fn close(self) {
        let _ = self.client.close().await;
    }
}

/// Where the screenshots go: `target/console-screenshots/` (CI keeps them as artifacts).
pub fn screenshot_directory() -> PathBuf {
    // CARGO_TARGET_TMPDIR is `<target directory>/tmp`, wherever CARGO_TARGET_DIR puts the target directory.
    std::path::Path::new(env!("CARGO_TARGET_TMPDIR"))
        .parent()
        .expect("the target directory")
        .join("console-screenshots")
}

/// chromedriver's command for the entries of the browser's log not yet handed out (not in the W3C protocol;
/// chromedriver keeps it under `se/`, as Selenium asks for it).
#[derive(Debug)]
struct BrowserLog;

impl WebDriverCompatibleCommand for BrowserLog {
    fn endpoint(&self, base_url: &url::Url, session_id: Option<&str>) -> Result<url::Url, url::ParseError> {
        base_url.join(&format!("session/{}/se/log", session_id.unwrap_or_default()))
    }

    fn method_and_body(&self, _request_url: &url::Url) -> (http::Method, Option<String>) {
        (http::Method::POST, Some(r#"{"type":"browser"}"#.to_owned()))
    }
}

/// chromedriver's command that sends a DevTools protocol command to the tab.
#[derive(Debug)]
struct DevTools {
    command: &'static str,
    parameters: serde_json::Value,
}

impl WebDriverCompatibleCommand for DevTools {
    fn endpoint(&self, base_url: &url::Url, session_id: Option<&str>) -> Result<url::Url, url::ParseError> {
        base_url.join(&format!("session/{}/goog/cdp/execute", session_id.unwrap_or_default()))
    }

    fn method_and_body(&self, _request_url: &url::Url) -> (http::Method, Option<String>) {
        let body = serde_json::json!({ "cmd": self.command, "params": self.parameters });
        (http::Method::POST, Some(body.to_string()))
    }
}
