//! The real binary driven through a pseudo-terminal: keys in, screen out (read with a vt100
//! parser), with its own home directory (config, audit log) that goes away with it.

use std::fs::File;
use std::io::{Read, Write};
use std::process::{Child, Command, Stdio};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use super::terminal::open_pty;

const COLS: u16 = 120;
const ROWS: u16 = 36;

pub struct Screen {
    pub parser: Arc<Mutex<vt100::Parser>>,
    input: File,
    pub child: Child,
    pub home: tempfile::TempDir,
}

impl Screen {
    /// The binary on one demo cluster, demo-eu: the screen as it is for a single cluster.
    pub fn start() -> Screen {
        Screen::start_with(&["--demo", "--context", "demo-eu"], None)
    }

    /// The binary with `args`, and `config` (YAML text) as its config file when given.
    pub fn start_with(args: &[&str], config: Option<&str>) -> Screen {
        let (master, slave) = open_pty(ROWS, COLS);
        let home = tempfile::tempdir().unwrap();
        let mut command = Command::new(env!("CARGO_BIN_EXE_ops-pod-cleaner"));
        command.args(args);
        if let Some(text) = config {
            let path = home.path().join("config.yaml");
            std::fs::write(&path, text).unwrap();
            command.arg("--config").arg(path);
        }
        let child = command
            .current_dir(home.path())
            .env("HOME", home.path())
            .env("XDG_DATA_HOME", home.path())
            .env("XDG_CONFIG_HOME", home.path())
            .env_remove("OPS_POD_CLEANER_CONFIG")
            .env("TERM", "xterm-256color")
            .stdin(Stdio::from(slave.try_clone().unwrap()))
            .stdout(Stdio::from(slave.try_clone().unwrap()))
            .stderr(Stdio::from(slave))
            .spawn()
            .expect("start the binary");
        let input = master.try_clone().unwrap();
        let parser = Arc::new(Mutex::new(vt100::Parser::new(ROWS, COLS, 0)));
        let feed = parser.clone();
        std::thread::spawn(move || {
            let mut master = master;
            let mut buf = [0u8; 8192];
            while let Ok(n) = master.read(&mut buf) {
                if n == 0 {
                    break;
                }
                feed.lock().unwrap().process(&buf[..n]);
            }
        });
        Screen {
            parser,
            input,
            child,
            home,
        }
    }

    pub fn text(&self) -> String {
        self.parser.lock().unwrap().screen().contents()
    }

    /// Wait until the screen satisfies `ok`, or fail showing it.
    pub fn wait_for(&self, what: &str, ok: impl Fn(&str) -> bool) -> String {
        let deadline = Instant::now() + Duration::from_secs(20);
        loop {
            let text = self.text();
            if ok(&text) {
                return text;
            }
            assert!(
                Instant::now() < deadline,
                "timed out waiting for {what}; the screen:\n{text}"
            );
            std::thread::sleep(Duration::from_millis(100));
        }
    }

    pub fn wait_text(&self, needle: &str) -> String {
        self.wait_for(needle, |t| t.contains(needle))
    }

    pub fn keys(&mut self, bytes: &str) {
        self.input.write_all(bytes.as_bytes()).unwrap();
        self.input.flush().unwrap();
        // A lone ESC must not run into the next key (it would read as alt-key).
        std::thread::sleep(Duration::from_millis(250));
    }
}

impl Drop for Screen {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}
