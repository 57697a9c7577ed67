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
        Screen::start_sized(args, config, (ROWS, COLS))
    }

    /// The same on a terminal of `(rows, cols)`.
    pub fn start_sized(args: &[&str], config: Option<&str>, (rows, cols): (u16, u16)) -> Screen {
        let (master, slave) = open_pty(rows, cols);
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
        let parser = Arc::new(Mutex::new(vt100::Parser::new(rows, cols, 0)));
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

    /// The screen as an SVG, for a screenshot in `assets/`.
    pub fn svg(&self) -> String {
        svg(self.parser.lock().unwrap().screen())
    }

    /// The audit log the binary writes under `XDG_DATA_HOME`.
    /// The default audit log; under `--demo`, the demo's own beside it.
    pub fn audit_log(&self) -> String {
        let dir = self.home.path().join("ops-pod-cleaner");
        let demo = std::fs::read_to_string(dir.join("demo-audit.jsonl"));
        demo.or_else(|_| std::fs::read_to_string(dir.join("audit.jsonl")))
            .unwrap_or_default()
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

/// The screen as an SVG: one text run per stretch of cells that look alike.
fn svg(screen: &vt100::Screen) -> String {
    let (rows, cols) = screen.size();
    let (cw, ch) = (8.4, 17.0);
    let colour = |c: vt100::Color, default: &str| match c {
        vt100::Color::Default => default.to_string(),
        vt100::Color::Idx(i) => [
            "#1e1e1e", "#cd3131", "#0dbc79", "#b8a000", "#2472c8", "#bc3fbc", "#11a8cd", "#e5e5e5",
        ]
        .get(usize::from(i % 8))
        .unwrap_or(&default)
        .to_string(),
        vt100::Color::Rgb(r, g, b) => format!("#{r:02x}{g:02x}{b:02x}"),
    };
    let mut out = format!(
        "<svg xmlns=\"http://www.w3.org/2000/svg\" width=\"{}\" height=\"{}\" font-family=\"DejaVu Sans Mono, Menlo, monospace\" font-size=\"14\">\n<rect width=\"100%\" height=\"100%\" fill=\"#fdfdfd\"/>\n",
        f64::from(cols) * cw + 16.0,
        f64::from(rows) * ch + 16.0
    );
    for row in 0..rows {
        let mut col = 0;
        while col < cols {
            let Some(cell) = screen.cell(row, col) else {
                break;
            };
            let key = (cell.fgcolor(), cell.bold(), cell.inverse(), cell.dim());
            let start = col;
            let mut text = String::new();
            while col < cols {
                let Some(c) = screen.cell(row, col) else {
                    break;
                };
                if (c.fgcolor(), c.bold(), c.inverse(), c.dim()) != key {
                    break;
                }
                let s = c.contents();
                text.push_str(if s.is_empty() { " " } else { s });
                col += 1;
            }
            let x = 8.0 + f64::from(start) * cw;
            let y = 8.0 + f64::from(row) * ch;
            let fg = colour(key.0, "#202020");
            if key.2 {
                out.push_str(&format!(
                    "<rect x=\"{x:.1}\" y=\"{y:.1}\" width=\"{:.1}\" height=\"{ch}\" fill=\"{fg}\"/>\n",
                    f64::from(col - start) * cw
                ));
            }
            if text.trim().is_empty() {
                continue;
            }
            let escaped = text
                .replace('&', "&amp;")
                .replace('<', "&lt;")
                .replace('>', "&gt;");
            out.push_str(&format!(
                "<text x=\"{x:.1}\" y=\"{:.1}\" xml:space=\"preserve\" textLength=\"{:.1}\" fill=\"{}\"{}{}>{escaped}</text>\n",
                y + 13.0,
                f64::from(col - start) * cw,
                if key.2 { "#fdfdfd".to_string() } else { fg },
                if key.1 { " font-weight=\"bold\"" } else { "" },
                if key.3 { " opacity=\"0.6\"" } else { "" },
            ));
        }
    }
    out.push_str("</svg>\n");
    out
}
