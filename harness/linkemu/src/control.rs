//! The control channel: JSON lines on a Unix stream socket, one reply line per
//! request (docs/reference/interfaces.md, "Control channel"). The same `Command` type carries
//! the `schedule` of a config file.

use std::collections::HashMap;
use std::io::{self, Read, Write};
use std::os::fd::AsRawFd;
use std::os::unix::net::{UnixListener, UnixStream};
use std::path::{Path, PathBuf};

use serde_json::{json, Value};

use crate::config::PathConfig;
use crate::event::{FORWARD, REVERSE};

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Direction {
    Forward,
    Reverse,
    Both,
}

#[derive(Debug, Clone, PartialEq)]
pub enum Command {
    Stats,
    Change {
        path: String,
        direction: Direction,
        spec: String,
    },
    /// A path (or one of its directions) drops what arrives and what is on it.
    Down {
        path: String,
        direction: Direction,
    },
    Up {
        path: String,
        direction: Direction,
    },
}

impl Direction {
    /// The directions (FORWARD, REVERSE indices) this one names.
    pub fn indices(self) -> &'static [usize] {
        match self {
            Direction::Forward => &[FORWARD],
            Direction::Reverse => &[REVERSE],
            Direction::Both => &[FORWARD, REVERSE],
        }
    }
}

impl Command {
    /// Parse `{"cmd": ...}`; keys in `extra` (e.g. a schedule's "at_ms") are allowed.
    /// Errors are one line.
    pub fn from_json(v: &Value, extra: &[&str]) -> Result<Command, String> {
        let obj = v
            .as_object()
            .ok_or_else(|| format!("expected a JSON object, got {v}"))?;
        let text = |k: &str| -> Result<String, String> {
            match obj.get(k) {
                Some(Value::String(s)) => Ok(s.clone()),
                Some(other) => Err(format!("\"{k}\" must be a string, got {other}")),
                None => Err(format!("\"{k}\" is required")),
            }
        };
        let direction = || match obj.get("direction") {
            None => Ok(Direction::Both),
            Some(d) => match d.as_str() {
                Some("forward") => Ok(Direction::Forward),
                Some("reverse") => Ok(Direction::Reverse),
                Some("both") => Ok(Direction::Both),
                _ => Err(format!(
                    "\"direction\" must be \"forward\", \"reverse\" or \"both\", got {d}"
                )),
            },
        };
        let cmd = text("cmd")?;
        let (command, keys): (Command, &[&str]) = match cmd.as_str() {
            "stats" => (Command::Stats, &["cmd"]),
            "down" => (
                Command::Down {
                    path: text("path")?,
                    direction: direction()?,
                },
                &["cmd", "path", "direction"],
            ),
            "up" => (
                Command::Up {
                    path: text("path")?,
                    direction: direction()?,
                },
                &["cmd", "path", "direction"],
            ),
            "change" => {
                let c = Command::Change {
                    path: text("path")?,
                    direction: direction()?,
                    spec: text("spec")?,
                };
                (c, &["cmd", "path", "direction", "spec"])
            }
            other => return Err(format!("unknown cmd {other:?}; expected stats, change, down or up")),
        };
        if let Some(k) = obj
            .keys()
            .find(|k| !keys.contains(&k.as_str()) && !extra.contains(&k.as_str()))
        {
            return Err(format!("unexpected key \"{k}\" for cmd {cmd:?}"));
        }
        Ok(command)
    }

    pub fn path(&self) -> Option<&str> {
        match self {
            Command::Stats => None,
            Command::Change { path, .. } | Command::Down { path, .. } | Command::Up { path, .. } => Some(path),
        }
    }

    /// The named path exists, and a change's spec parses and keeps a shared queue
    /// consistent (one queue has one spec, so both directions change together).
    pub fn check_paths(&self, paths: &[PathConfig]) -> Result<(), String> {
        let Some(name) = self.path() else { return Ok(()) };
        let Some(p) = paths.iter().find(|p| p.name == name) else {
            let names: Vec<&str> = paths.iter().map(|p| p.name.as_str()).collect();
            return Err(format!("no path named {name:?}; paths are {}", names.join(", ")));
        };
        if let Command::Change { direction, spec, .. } = self {
            crate::spec::NetemSpec::parse(spec).map_err(|e| format!("spec: {e}"))?;
            if p.shared_queue && *direction != Direction::Both {
                return Err(format!(
                    "path {name:?} has a shared queue: change it with direction \"both\""
                ));
            }
        }
        Ok(())
    }
}

/// Longest request line accepted; a longer one closes the connection.
const MAX_LINE: usize = 64 * 1024;

struct Conn {
    stream: UnixStream,
    buf: Vec<u8>,
}

/// The listening socket and its connections. The engine owns the socket file: it
/// refuses to start over an existing path and removes the file when it exits.
pub struct ControlServer {
    listener: UnixListener,
    path: PathBuf,
    conns: HashMap<u64, Conn>,
    next_id: u64,
}

pub enum Input {
    Request(Result<Command, String>),
    Closed,
}

impl ControlServer {
    pub fn bind(path: &Path) -> Result<ControlServer, String> {
        if path.exists() {
            return Err(format!(
                "control socket {}: path exists; remove it or choose another",
                path.display()
            ));
        }
        let listener = UnixListener::bind(path).map_err(|e| format!("control socket {}: {e}", path.display()))?;
        listener.set_nonblocking(true).map_err(|e| e.to_string())?;
        Ok(ControlServer {
            listener,
            path: path.to_owned(),
            conns: HashMap::new(),
            next_id: 0,
        })
    }

    pub fn listener_fd(&self) -> i32 {
        self.listener.as_raw_fd()
    }

    /// Accept waiting connections; returns (id, fd) of each for the poller.
    pub fn accept(&mut self) -> Vec<(u64, i32)> {
        let mut new = vec![];
        while let Ok((stream, _)) = self.listener.accept() {
            if stream.set_nonblocking(true).is_err() {
                continue;
            }
            self.next_id += 1;
            new.push((self.next_id, stream.as_raw_fd()));
            self.conns.insert(self.next_id, Conn { stream, buf: vec![] });
        }
        new
    }

    /// Read what connection `id` sent: complete request lines, and Closed at the end
    /// (EOF, error, or an over-long line).
    pub fn read(&mut self, id: u64) -> Vec<Input> {
        let mut out = vec![];
        let Some(conn) = self.conns.get_mut(&id) else {
            return out;
        };
        let mut chunk = [0u8; 4096];
        let mut closed = false;
        loop {
            match conn.stream.read(&mut chunk) {
                Ok(0) => {
                    closed = true;
                    break;
                }
                Ok(n) => conn.buf.extend_from_slice(&chunk[..n]),
                Err(e) if e.kind() == io::ErrorKind::WouldBlock => break,
                Err(e) if e.kind() == io::ErrorKind::Interrupted => continue,
                Err(_) => {
                    closed = true;
                    break;
                }
            }
        }
        while let Some(nl) = conn.buf.iter().position(|&b| b == b'\n') {
            let line: Vec<u8> = conn.buf.drain(..=nl).collect();
            let line = String::from_utf8_lossy(&line);
            if line.trim().is_empty() {
                continue;
            }
            out.push(Input::Request(
                serde_json::from_str::<Value>(line.trim())
                    .map_err(|e| format!("request is not JSON: {e}"))
                    .and_then(|v| Command::from_json(&v, &[])),
            ));
        }
        if conn.buf.len() > MAX_LINE {
            closed = true;
        }
        if closed {
            out.push(Input::Closed);
        }
        out
    }

    /// Send one reply line. A client that does not read its replies is dropped.
    pub fn reply(&mut self, id: u64, v: &Value) {
        let Some(conn) = self.conns.get_mut(&id) else { return };
        let mut line = v.to_string();
        line.push('\n');
        if conn.stream.write_all(line.as_bytes()).is_err() {
            self.close(id);
        }
    }

    /// Forget connection `id`; returns its fd so the poller can stop watching it.
    pub fn close(&mut self, id: u64) -> Option<i32> {
        self.conns.remove(&id).map(|c| c.stream.as_raw_fd())
    }
}

impl Drop for ControlServer {
    fn drop(&mut self) {
        let _ = std::fs::remove_file(&self.path);
    }
}

pub fn error_reply(msg: &str) -> Value {
    json!({"ok": false, "error": msg})
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn parses_each_command() {
        let p = |s: &str| Command::from_json(&serde_json::from_str(s).unwrap(), &[]);
        assert_eq!(p(r#"{"cmd":"stats"}"#), Ok(Command::Stats));
        assert_eq!(
            p(r#"{"cmd":"down","path":"p0"}"#),
            Ok(Command::Down {
                path: "p0".into(),
                direction: Direction::Both
            })
        );
        assert_eq!(
            p(r#"{"cmd":"up","path":"p0","direction":"reverse"}"#),
            Ok(Command::Up {
                path: "p0".into(),
                direction: Direction::Reverse
            })
        );
        assert!(p(r#"{"cmd":"down","path":"p0","direction":"sideways"}"#)
            .unwrap_err()
            .contains("direction"));
        assert_eq!(
            p(r#"{"cmd":"change","path":"p0","spec":"loss 1%"}"#),
            Ok(Command::Change {
                path: "p0".into(),
                direction: Direction::Both,
                spec: "loss 1%".into()
            })
        );
        assert!(p(r#"{"cmd":"change","path":"p0","spec":"x","direction":"up"}"#)
            .unwrap_err()
            .contains("direction"));
        assert!(p(r#"{"cmd":"down"}"#).unwrap_err().contains("\"path\" is required"));
        assert!(p(r#"{"cmd":"stats","x":1}"#).unwrap_err().contains("\"x\""));
        assert!(p(r#"{"cmd":7}"#).unwrap_err().contains("\"cmd\" must be a string"));
        assert!(p(r#"[1]"#).unwrap_err().contains("expected a JSON object"));
    }

    mod fuzz {
        use super::super::*;
        use proptest::prelude::*;

        proptest! {
            /// Nonsense on the control socket gives an error line, never a panic.
            #[test]
            fn any_json_gets_an_answer(text in "\\PC{0,80}") {
                if let Ok(v) = serde_json::from_str::<Value>(&text) {
                    if let Err(e) = Command::from_json(&v, &[]) {
                        prop_assert!(!e.contains('\n'));
                    }
                }
            }

            #[test]
            fn any_command_object_gets_an_answer(cmd in "[a-z]{0,8}", path in any::<Option<String>>(),
                                                 spec in any::<Option<String>>(), dir in any::<Option<String>>()) {
                let mut o = serde_json::Map::new();
                o.insert("cmd".into(), Value::String(cmd));
                for (k, v) in [("path", path), ("spec", spec), ("direction", dir)] {
                    if let Some(v) = v { o.insert(k.into(), Value::String(v)); }
                }
                let _ = Command::from_json(&Value::Object(o), &[]);
            }
        }
    }
}
