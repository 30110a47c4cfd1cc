//! An event trace of every packet's fate, as JSON lines (`--trace FILE`, config key
//! `"trace"`). The pcap holds only what left the link; a time-sequence graph
//! (harness/plots) also needs what the link dropped (loss, queue limit, path down),
//! which copies it made and which it damaged. One line per event:
//!
//! ```text
//! {"ev":"start","mode":"udp","seed":1,"paths":["p0"]}
//! {"ev":"in","t":T,"path":0,"dir":"forward","id":7,"len":1027,"head":"0007000102...",
//!  "repeat":false,"fate":"queued","corrupted":false,"reordered":false,"dup":null}
//! {"ev":"out","t":T,"path":0,"dir":"forward","id":7,"copy":"orig","fate":"delivered","corrupted":false}
//! ```
//! - `t`: CLOCK_MONOTONIC ns (the stats' clock). `id`: the arrival number mod 2^24,
//!   shared by a packet's `in` line and the `out` lines of its copies.
//! - `head`: the first bytes (hex, at most `HEAD_BYTES`) of the application payload as
//!   it arrived, before any corruption (UDP mode: the datagram; TUN mode: the bytes
//!   after the UDP/TCP header, empty for other packets).
//! - `fate` of the original: `queued`, `lost`, `queue_drop`, `down_drop`; `dup`:
//!   null, or the link-made copy's `{"fate":..,"corrupted":..}` when netem duplicated it.
//! - `out`: a queued copy left (`delivered`), or was dropped on the way out because
//!   its path went down (`down_drop`) or the send failed (`io_error`).
//! - `repeat`: the payload was seen before in this direction (the stats' `repeats`).
//!
//! Bounded like the pcap: past `max_bytes` lines are left out and counted
//! (`trace_skipped` in the stats). With a tail (config `trace_tail`), only the last
//! lines are kept, in memory, and written after the start line when the engine stops:
//! the end of a transfer too long to trace whole; the lines before it are counted as
//! skipped, and an `out` line whose `in` line was not kept is read as nothing.

use std::collections::VecDeque;
use std::fmt::Write as _;
use std::fs::File;
use std::io::{self, BufWriter, Write};
use std::path::Path;

use crate::link::{Fate, Verdict};

/// Payload bytes kept per packet: the COMN header (3), or the extended header (12)
/// with an ACK's count and first selective-ACK range (9).
pub const HEAD_BYTES: usize = 32;
pub const DEFAULT_MAX_BYTES: u64 = 1 << 30;

pub struct Trace {
    out: BufWriter<File>,
    written: u64,
    max_bytes: u64,
    pub skipped: u64,
    line: String,
    /// The last lines, kept to be written at the end (`trace_tail`), and how many.
    tail: Option<(VecDeque<String>, usize)>,
}

fn dir_name(dir: usize) -> &'static str {
    if dir == 0 {
        "forward"
    } else {
        "reverse"
    }
}

fn fate_name(f: Fate) -> (&'static str, bool, bool) {
    match f {
        Fate::Queued { corrupted, reordered } => ("queued", corrupted, reordered),
        Fate::Lost => ("lost", false, false),
        Fate::QueueDrop => ("queue_drop", false, false),
    }
}

impl Trace {
    /// Create the file and write the start line naming the paths (their index is `path`).
    /// `tail`: keep only the last this many lines after the start line.
    pub fn create(
        path: &Path,
        max_bytes: u64,
        tail: Option<u64>,
        mode: &str,
        seed: u64,
        paths: &[String],
    ) -> io::Result<Trace> {
        let out = BufWriter::new(File::create(path)?);
        let mut t = Trace {
            out,
            written: 0,
            max_bytes,
            skipped: 0,
            line: String::with_capacity(256),
            tail: None,
        };
        let start = serde_json::json!({"ev": "start", "mode": mode, "seed": seed, "paths": paths});
        t.line = start.to_string();
        t.emit();
        t.tail = tail.map(|n| (VecDeque::new(), n.max(1) as usize));
        Ok(t)
    }

    /// A packet came into path `path`, direction `dir`, and the link decided `verdict`
    /// (`None`: the path was down, nothing was decided).
    #[allow(clippy::too_many_arguments)]
    pub fn arrival(
        &mut self,
        t: u64,
        path: usize,
        dir: usize,
        id: u32,
        payload: &[u8],
        len: usize,
        repeat: bool,
        verdict: Option<Verdict>,
    ) {
        self.line.clear();
        let l = &mut self.line;
        let _ = write!(
            l,
            r#"{{"ev":"in","t":{t},"path":{path},"dir":"{}","id":{id},"len":{len},"head":""#,
            dir_name(dir)
        );
        for b in &payload[..payload.len().min(HEAD_BYTES)] {
            let _ = write!(l, "{b:02x}");
        }
        let (fate, corrupted, reordered) = match verdict {
            Some(v) => fate_name(v.original),
            None => ("down_drop", false, false),
        };
        let _ = write!(
            l,
            r#"","repeat":{repeat},"fate":"{fate}","corrupted":{corrupted},"reordered":{reordered},"dup":"#
        );
        match verdict.and_then(|v| v.duplicate) {
            Some(d) => {
                let (fate, corrupted, _) = fate_name(d);
                let _ = write!(l, r#"{{"fate":"{fate}","corrupted":{corrupted}}}}}"#);
            }
            None => l.push_str("null}"),
        }
        self.emit();
    }

    /// A queued copy left the link (`fate` "delivered"), or was dropped on its way out.
    #[allow(clippy::too_many_arguments)] // one trace line's fields, in its order
    pub fn departure(
        &mut self,
        t: u64,
        path: usize,
        dir: usize,
        id: u32,
        duplicate: bool,
        fate: &str,
        corrupted: bool,
    ) {
        self.line.clear();
        let copy = if duplicate { "dup" } else { "orig" };
        let _ = write!(
            self.line,
            r#"{{"ev":"out","t":{t},"path":{path},"dir":"{}","id":{id},"copy":"{copy}","fate":"{fate}","corrupted":{corrupted}}}"#,
            dir_name(dir)
        );
        self.emit();
    }

    fn emit(&mut self) {
        if let Some((kept, most)) = &mut self.tail {
            if kept.len() == *most {
                kept.pop_front();
                self.skipped += 1;
            }
            kept.push_back(self.line.clone());
            return;
        }
        self.write_line();
    }

    fn write_line(&mut self) {
        let n = self.line.len() as u64 + 1;
        if self.written + n > self.max_bytes {
            self.skipped += 1;
            return;
        }
        // A write error (disk full) stops the trace, never the link.
        if self
            .out
            .write_all(self.line.as_bytes())
            .and_then(|_| self.out.write_all(b"\n"))
            .is_err()
        {
            self.max_bytes = 0;
        }
        self.written += n;
    }

    /// Write what is buffered: the kept tail, once the engine stops.
    pub fn flush(&mut self) {
        if let Some((kept, _)) = self.tail.take() {
            for line in kept {
                self.line = line;
                self.write_line();
            }
        }
        let _ = self.out.flush();
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::Value;

    fn lines(path: &Path) -> Vec<Value> {
        std::fs::read_to_string(path)
            .unwrap()
            .lines()
            .map(|l| serde_json::from_str(l).expect("valid JSON"))
            .collect()
    }

    #[test]
    fn lines_are_json_with_every_fate() {
        let path = std::env::temp_dir().join(format!("linkemu-trace-test-{}", std::process::id()));
        let mut t = Trace::create(&path, DEFAULT_MAX_BYTES, None, "udp", 7, &["p\"0".into()]).unwrap();
        let queued = Fate::Queued {
            corrupted: true,
            reordered: false,
        };
        t.arrival(
            10,
            0,
            0,
            1,
            &[0, 1, 0, 0xff],
            4,
            false,
            Some(Verdict {
                original: queued,
                duplicate: Some(Fate::Lost),
            }),
        );
        t.arrival(
            11,
            0,
            1,
            2,
            &[0u8; 100],
            100,
            true,
            Some(Verdict {
                original: Fate::QueueDrop,
                duplicate: None,
            }),
        );
        t.arrival(12, 0, 1, 3, &[], 0, false, None);
        t.departure(20, 0, 0, 1, true, "delivered", false);
        t.flush();
        let v = lines(&path);
        assert_eq!(v[0]["paths"][0], "p\"0");
        assert_eq!(v[1]["head"], "000100ff");
        assert_eq!(
            (v[1]["fate"].as_str(), v[1]["corrupted"].as_bool()),
            (Some("queued"), Some(true))
        );
        assert_eq!(v[1]["dup"]["fate"], "lost");
        assert_eq!(v[2]["head"].as_str().unwrap().len(), 2 * HEAD_BYTES, "head is cut");
        assert_eq!(
            (v[2]["fate"].as_str(), v[2]["repeat"].as_bool(), v[2]["dir"].as_str()),
            (Some("queue_drop"), Some(true), Some("reverse"))
        );
        assert!(v[2]["dup"].is_null());
        assert_eq!(v[3]["fate"], "down_drop");
        assert_eq!(
            (v[4]["ev"].as_str(), v[4]["copy"].as_str(), v[4]["t"].as_u64()),
            (Some("out"), Some("dup"), Some(20))
        );
        std::fs::remove_file(&path).unwrap();
    }

    #[test]
    fn file_is_bounded() {
        let path = std::env::temp_dir().join(format!("linkemu-trace-bound-{}", std::process::id()));
        let mut t = Trace::create(&path, 200, None, "udp", 1, &["p0".into()]).unwrap();
        for i in 0..5 {
            t.departure(i, 0, 0, i as u32, false, "delivered", false);
        }
        t.flush();
        assert!(t.skipped >= 3);
        assert_eq!(lines(&path).len() as u64, 6 - t.skipped);
        assert!(std::fs::metadata(&path).unwrap().len() <= 200);
        std::fs::remove_file(&path).unwrap();
    }

    #[test]
    fn a_tail_keeps_the_start_and_the_last_lines() {
        let path = std::env::temp_dir().join(format!("linkemu-trace-tail-{}", std::process::id()));
        let mut t = Trace::create(&path, DEFAULT_MAX_BYTES, Some(3), "udp", 1, &["p0".into()]).unwrap();
        for i in 0..10 {
            t.departure(i, 0, 0, i as u32, false, "delivered", false);
        }
        assert_eq!(lines(&path).len(), 0, "the tail is written when the engine stops");
        t.flush();
        let v = lines(&path);
        assert_eq!(v[0]["ev"], "start");
        let kept: Vec<u64> = v[1..].iter().map(|l| l["t"].as_u64().unwrap()).collect();
        assert_eq!(kept, vec![7, 8, 9]);
        assert_eq!(t.skipped, 7);
        std::fs::remove_file(&path).unwrap();
    }
}
