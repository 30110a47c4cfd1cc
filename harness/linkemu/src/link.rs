//! One netem qdisc instance, sans-IO: packets and the time go in, departures come out.

use crate::spec::NetemSpec;
use std::ops::Range;

/// Bytes netem on `lo` counts for the rate beyond the UDP payload: Ethernet 14 + IPv4 20 + UDP 8.
pub const WIRE_OVERHEAD_UDP4: u32 = 14 + 20 + 8;
/// Same for IPv6: Ethernet 14 + IPv6 40 + UDP 8.
pub const WIRE_OVERHEAD_UDP6: u32 = 14 + 40 + 8;
/// TUN mode hands the link whole IP packets; netem on a veth/lo adds the 14-byte Ethernet header.
pub const WIRE_OVERHEAD_IP: u32 = 14;

/// What happened to one copy of a packet.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Fate {
    /// In the delay line. `reordered`: sent at once ahead of the queue (netem's reorder).
    Queued { corrupted: bool, reordered: bool },
    /// Dropped by the loss model.
    Lost,
    /// Dropped because the delay line held `limit` packets.
    QueueDrop,
}

/// What `enqueue` did with a packet and, when netem's duplicate decision fired, its copy.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Verdict {
    pub original: Fate,
    /// `Some` when the duplicate decision fired. If the original was lost the copy
    /// still goes on (netem: count = 2 - 1), so `original: Lost, duplicate: Some(Queued)`.
    pub duplicate: Option<Fate>,
}

/// A packet leaving the link.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Departure {
    pub data: Vec<u8>,
    pub tag: u32,
    /// When it was due out (ns); the caller's lateness is `now - due`.
    pub due: u64,
    /// When it arrived (ns): `due - arrived` is the time it spent in the link.
    pub arrived: u64,
    /// A link-made copy.
    pub duplicate: bool,
    pub corrupted: bool,
}

/// One netem qdisc: one delay line.
pub struct Link {
    spec: NetemSpec,
    wire_overhead: u32,
    queue: Vec<Departure>,
}

impl Link {
    pub fn new(spec: NetemSpec, _seed: u64) -> Link {
        Link { spec, wire_overhead: 0, queue: Vec::new() }
    }

    /// Bytes added to each packet's length for the rate (see the WIRE_OVERHEAD_* constants).
    pub fn set_wire_overhead(&mut self, bytes: u32) {
        self.wire_overhead = bytes;
    }

    pub fn spec(&self) -> &NetemSpec {
        &self.spec
    }

    pub fn enqueue(&mut self, now: u64, data: Vec<u8>, _corrupt_range: Range<usize>, tag: u32) -> Verdict {
        self.queue.push(Departure { data, tag, due: now, arrived: now, duplicate: false, corrupted: false });
        Verdict { original: Fate::Queued { corrupted: false, reordered: false }, duplicate: None }
    }

    pub fn next_due(&self) -> Option<u64> {
        self.queue.first().map(|d| d.due)
    }

    pub fn dequeue(&mut self, now: u64) -> Option<Departure> {
        if self.queue.first().is_some_and(|d| d.due <= now) {
            Some(self.queue.remove(0))
        } else {
            None
        }
    }

    pub fn set_spec(&mut self, spec: NetemSpec) {
        self.spec = spec;
    }

    pub fn queue_len(&self) -> usize {
        self.queue.len()
    }
}
