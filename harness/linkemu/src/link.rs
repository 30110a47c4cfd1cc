//! One netem qdisc instance, sans-IO: packets and the time go in, departures come out.
//!
//! Per packet, in netem's order (`netem_enqueue` in net/sched/sch_netem.c):
//! 1. duplicate decision; 2. loss decision (if both fire, one copy goes on: netem's
//!    `count` is 2 - 1); 3. the duplicate is cloned before the original is touched;
//! 4. corrupt the original (one random bit in `corrupt_range`); 5. tail drop when the
//!    delay line holds `limit` packets; 6. the duplicate makes its own pass through
//!    loss, corruption, limit and delay (netem re-enqueues it at the root, with
//!    duplication off); 7. reorder (sent at once, ahead of the queue) or delay with
//!    jitter; 8. with `rate`, serialisation behind the last packet in the queue:
//!    `due = max(last_due, now + delay) + t_ser`, so with a rate jitter never reorders;
//! 9. release in due-time order; with `slot`, only while a slot is open, up to its
//!    packets/bytes, after which the next slot is drawn (netem_dequeue's slot logic).
//!
//! Time is u64 nanoseconds from any monotonic clock the caller likes.
//!
//! # Packet length for `rate`
//! The rate counts `data.len() + wire_overhead` bytes per packet, plus the spec's own
//! packet and cell overheads. The convention is "the bytes netem on `lo` would
//! count": netem there sees the Ethernet header (14) + IP + transport. So in UDP-relay
//! mode (data = the datagram payload) set `WIRE_OVERHEAD_UDP4` (42) or
//! `WIRE_OVERHEAD_UDP6` (62); in TUN mode (data = the IP packet) `WIRE_OVERHEAD_IP` (14).
//! Then `rate 10mbit` means the same as `tc qdisc add dev lo root netem rate 10mbit`.
//!
//! # Deviations from netem, on purpose
//! - Every random choice, including the corrupted bit and the correlation start
//!   values, comes from the link's seeded generator, so runs are reproducible.
//! - `limit` is strict: netem can let an original in one over the limit after its
//!   duplicate took the last place; here that original is tail-dropped instead.
//!   `limit` counts every packet held, including reordered ones awaiting release.
//! - `set_spec` keeps the generator unless the new spec has a `seed` (netem reseeds
//!   from entropy on every change).
//! - A queue shared by both directions (`Link::shared`, netem on `lo`) keeps one delay
//!   line and rate, but each direction draws from a generator of its own (netem has one
//!   per qdisc): the k-th packet each way meets the same draws however the data and ACKs
//!   interleave, so a host that holds a program up does not reshuffle which of them the
//!   losses hit (BENCHMARKS.md, "The engine").
//! - `enqueue_keyed` draws a packet's fate from a generator of its own, seeded by the
//!   link's seed, what the packet carries (the caller's key) and how many times the
//!   link has seen that key: the k-th copy of the same bytes meets the same loss,
//!   duplication, corruption and jitter draws however many other packets came before
//!   it, so a host that delays a program, or a timer that fires once more, does not
//!   move which packets are lost. Correlations and the burst-loss models' states still
//!   carry from packet to packet in arrival order, as in netem.

use crate::dist::{self, Table};
use crate::loss::Loss;
use crate::rng::{mix, Correlated, Rng};
use crate::spec::{NetemSpec, Rate, Slot, SlotDelay};
use std::collections::{BTreeMap, HashMap, VecDeque};
use std::ops::Range;

/// Bytes netem on `lo` counts beyond a UDP payload: Ethernet 14 + IPv4 20 + UDP 8.
pub const WIRE_OVERHEAD_UDP4: u32 = 14 + 20 + 8;
/// The same for IPv6: Ethernet 14 + IPv6 40 + UDP 8.
pub const WIRE_OVERHEAD_UDP6: u32 = 14 + 40 + 8;
/// TUN mode hands the link whole IP packets; netem on `lo`/veth adds the Ethernet header.
pub const WIRE_OVERHEAD_IP: u32 = 14;

/// Keys whose copies a link counts before it forgets them all (about 16 MB): only a
/// flood of distinct packets gets there, and it then draws as a fresh link would.
const MAX_KEYS: usize = 1 << 20;

/// netem caps jitter to what `tabledist` handles (i32 nanoseconds).
const MAX_JITTER_NS: u64 = i32::MAX as u64;

/// What happened to one copy of a packet.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Fate {
    /// In the delay line. `reordered`: netem's reorder sent it at once, ahead of the queue.
    Queued { corrupted: bool, reordered: bool },
    /// Dropped by the loss model.
    Lost,
    /// Dropped because the delay line held `limit` packets.
    QueueDrop,
}

impl Fate {
    pub fn is_queued(self) -> bool {
        matches!(self, Fate::Queued { .. })
    }
}

/// What `enqueue` did with a packet and, when netem's duplicate decision fired, its copy.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Verdict {
    pub original: Fate,
    /// `Some` when the duplicate decision fired. When the original is also lost the
    /// copy still goes on (`original: Lost, duplicate: Some(Queued{..})`): one packet
    /// is delivered, as with netem.
    pub duplicate: Option<Fate>,
}

impl Verdict {
    /// Copies that went into the delay line (0, 1 or 2).
    pub fn queued(&self) -> usize {
        self.original.is_queued() as usize + self.duplicate.is_some_and(Fate::is_queued) as usize
    }
}

/// A packet leaving the link.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Departure {
    pub data: Vec<u8>,
    pub tag: u32,
    /// When it was due out (ns); how late the caller sent it is `now - due`.
    pub due: u64,
    /// When it arrived (ns): it spent `due - arrived` in the link.
    pub arrived: u64,
    /// A copy made by `duplicate`.
    pub duplicate: bool,
    pub corrupted: bool,
}

/// The spec in netem's fixed-point form, with its correlated generators.
struct Params {
    latency: i64,
    jitter: i64,
    table: Option<&'static Table>,
    duplicate: u32,
    corrupt: u32,
    reorder: u32,
    gap: u32,
    rate: Option<Rate>,
    limit: usize,
    slot: Option<Slot>,
    delay_cor: Correlated,
    dup_cor: Correlated,
    corrupt_cor: Correlated,
    reorder_cor: Correlated,
    loss: Loss,
}

impl Params {
    /// Like netem_change: fresh correlation state and loss-model state.
    fn new(spec: &NetemSpec, rng: &mut Rng) -> Params {
        Params {
            latency: spec.delay_ns as i64,
            jitter: spec.jitter_ns.min(MAX_JITTER_NS) as i64,
            table: dist::table(spec.distribution),
            duplicate: spec.duplicate.p.scaled(),
            corrupt: spec.corrupt.p.scaled(),
            reorder: spec.reorder.p.scaled(),
            gap: spec.gap,
            rate: spec.rate,
            limit: spec.limit as usize,
            slot: spec.slot,
            delay_cor: Correlated::new(spec.delay_corr.scaled(), rng),
            dup_cor: Correlated::new(spec.duplicate.corr.scaled(), rng),
            corrupt_cor: Correlated::new(spec.corrupt.corr.scaled(), rng),
            reorder_cor: Correlated::new(spec.reorder.corr.scaled(), rng),
            loss: Loss::new(&spec.loss, rng),
        }
    }
}

/// One direction's random draws on a shared queue: its generator and the state netem
/// keeps between draws (correlations, the loss model).
struct Draws {
    rng: Rng,
    p: Params,
    keys: Keys,
}

/// The seed of keyed packets' own generators, and how many copies of each key came.
struct Keys {
    seed: u64,
    copies: HashMap<u64, u64>,
}

impl Keys {
    fn new(seed: u64) -> Keys {
        Keys {
            seed,
            copies: HashMap::new(),
        }
    }

    /// The generator of the next copy of `key`.
    fn rng(&mut self, key: u64) -> Rng {
        if self.copies.len() >= MAX_KEYS && !self.copies.contains_key(&key) {
            self.copies.clear();
        }
        let n = self.copies.entry(key).or_insert(0);
        *n += 1;
        Rng::new(mix(&[self.seed, key, *n]))
    }
}

/// One netem qdisc: one delay line, fed by `enqueue`, drained by `dequeue`.
pub struct Link {
    spec: NetemSpec,
    p: Params,
    rng: Rng,
    keys: Keys,
    /// A shared queue's reverse direction's draws (`enqueue_reverse`); None otherwise.
    reverse: Option<Draws>,
    wire_overhead: u32,
    /// netem's tfifo: packets by (due, arrival number), so ties leave in arrival order.
    tfifo: BTreeMap<(u64, u64), Departure>,
    /// Reordered packets, put at the head of the queue as netem does (newest first).
    head: VecDeque<Departure>,
    /// netem's reorder counter: packets delayed since the last reordered one.
    counter: u32,
    arrivals: u64,
    /// The current slot, when `slot` is set.
    slot: Option<SlotState>,
}

/// netem's `struct slotstate`: when the next slot opens and what it may still let out.
#[derive(Clone, Copy, Debug)]
struct SlotState {
    next: u64,
    packets_left: i64,
    bytes_left: i64,
}

impl Link {
    /// A link with `spec`; its `seed` option, if any, wins over `seed`.
    pub fn new(spec: NetemSpec, seed: u64) -> Link {
        let seed = spec.seed.unwrap_or(seed);
        let mut rng = Rng::new(seed);
        let p = Params::new(&spec, &mut rng);
        Link {
            spec,
            slot: open_slot(&p),
            p,
            rng,
            keys: Keys::new(seed),
            reverse: None,
            wire_overhead: 0,
            tfifo: BTreeMap::new(),
            head: VecDeque::new(),
            counter: 0,
            arrivals: 0,
        }
    }

    /// A queue both directions share: `enqueue` takes the forward direction's packets,
    /// drawing from `seed`, and `enqueue_reverse` the reverse's, drawing from
    /// `reverse_seed` (a `seed` option in the spec wins over both).
    pub fn shared(spec: NetemSpec, seed: u64, reverse_seed: u64) -> Link {
        let mut link = Link::new(spec, seed);
        link.reverse = Some(Draws::new(&link.spec, reverse_seed));
        link
    }

    /// Bytes added to each packet's length for `rate` (see the module doc and the
    /// `WIRE_OVERHEAD_*` constants). Default 0.
    pub fn set_wire_overhead(&mut self, bytes: u32) {
        self.wire_overhead = bytes;
    }

    pub fn spec(&self) -> &NetemSpec {
        &self.spec
    }

    /// Like `tc qdisc change`: new options for packets from now on; the queue and
    /// the generator stay (a `seed` in the new spec reseeds it).
    pub fn set_spec(&mut self, spec: NetemSpec) {
        if let Some(seed) = spec.seed {
            self.rng = Rng::new(seed);
            self.keys = Keys::new(seed);
        }
        self.p = Params::new(&spec, &mut self.rng);
        if let Some(d) = &mut self.reverse {
            if let Some(seed) = spec.seed {
                d.rng = Rng::new(reverse_of(seed));
                d.keys = Keys::new(reverse_of(seed));
            }
            d.p = Params::new(&spec, &mut d.rng);
        }
        self.counter = 0;
        self.slot = open_slot(&self.p);
        self.spec = spec;
    }

    /// Packets held (delay line plus reordered ones awaiting release); never above `limit`.
    pub fn queue_len(&self) -> usize {
        self.tfifo.len() + self.head.len()
    }

    /// A packet arrives at `now`. `corrupt_range`: the bytes eligible for the one-bit
    /// flip (clipped to the packet). `tag` is opaque and comes back with the packet.
    /// Its draws are the link's next ones, in arrival order.
    pub fn enqueue(&mut self, now: u64, data: Vec<u8>, corrupt_range: Range<usize>, tag: u32) -> Verdict {
        self.enqueue_keyed(now, data, corrupt_range, tag, None)
    }

    /// `enqueue`, with the packet's own draws when `key` (what the packet carries, say
    /// a hash of its payload) is given: see the module doc.
    pub fn enqueue_keyed(
        &mut self,
        now: u64,
        data: Vec<u8>,
        corrupt_range: Range<usize>,
        tag: u32,
        key: Option<u64>,
    ) -> Verdict {
        let verdict = self.admit(now, data, &corrupt_range, tag, key);
        self.refresh_slot(now);
        verdict
    }

    /// `enqueue` for a shared queue's reverse direction: the same queue, that
    /// direction's own draws (the same as `enqueue` on a link that is not shared).
    pub fn enqueue_reverse(&mut self, now: u64, data: Vec<u8>, corrupt_range: Range<usize>, tag: u32) -> Verdict {
        self.enqueue_reverse_keyed(now, data, corrupt_range, tag, None)
    }

    /// `enqueue_keyed` for a shared queue's reverse direction.
    pub fn enqueue_reverse_keyed(
        &mut self,
        now: u64,
        data: Vec<u8>,
        corrupt_range: Range<usize>,
        tag: u32,
        key: Option<u64>,
    ) -> Verdict {
        let Some(mut draws) = self.reverse.take() else {
            return self.enqueue_keyed(now, data, corrupt_range, tag, key);
        };
        self.swap_draws(&mut draws);
        let verdict = self.admit(now, data, &corrupt_range, tag, key);
        self.swap_draws(&mut draws);
        self.reverse = Some(draws);
        self.refresh_slot(now); // slots are the queue's: drawn from the forward generator
        verdict
    }

    /// A new packet's pass through netem_enqueue; a keyed one draws from its own generator.
    fn admit(&mut self, now: u64, data: Vec<u8>, corrupt_range: &Range<usize>, tag: u32, key: Option<u64>) -> Verdict {
        let pkt = Departure {
            data,
            tag,
            due: now,
            arrived: now,
            duplicate: false,
            corrupted: false,
        };
        let Some(key) = key else {
            return self.netem_enqueue(now, pkt, corrupt_range, true);
        };
        let mut own = self.keys.rng(key);
        std::mem::swap(&mut self.rng, &mut own);
        let verdict = self.netem_enqueue(now, pkt, corrupt_range, true);
        std::mem::swap(&mut self.rng, &mut own);
        verdict
    }

    /// Put `draws` in the place of the forward direction's, and those in `draws`. The
    /// queue's settings (rate, limit, slot) are the same in both: a shared queue has one spec.
    fn swap_draws(&mut self, draws: &mut Draws) {
        std::mem::swap(&mut self.rng, &mut draws.rng);
        std::mem::swap(&mut self.p, &mut draws.p);
        std::mem::swap(&mut self.keys, &mut draws.keys);
    }

    /// When the next packet is due out, if any (with `slot`: not before the slot opens;
    /// a `dequeue` at that time may still find that a new slot had to be drawn).
    pub fn next_due(&self) -> Option<u64> {
        match self.head.front() {
            Some(p) => Some(p.due),
            None => {
                let due = self.tfifo.keys().next().map(|&(due, _)| due)?;
                Some(self.slot.map_or(due, |s| due.max(s.next)))
            }
        }
    }

    /// The next packet due at or before `now`, if any. Reordered packets go first
    /// (and, as in netem, ignore slots).
    pub fn dequeue(&mut self, now: u64) -> Option<Departure> {
        if self.head.front().is_some_and(|p| p.due <= now) {
            return self.head.pop_front();
        }
        self.refresh_slot(now);
        let due = self.tfifo.keys().next().map(|&(due, _)| due)?;
        if due > now || self.slot.is_some_and(|s| s.next > now) {
            return None;
        }
        let (_, pkt) = self.tfifo.pop_first()?;
        if let Some(s) = &mut self.slot {
            s.packets_left -= 1;
            s.bytes_left -= pkt.data.len() as i64 + self.wire_overhead as i64;
            if s.packets_left <= 0 || s.bytes_left <= 0 {
                self.next_slot(now);
            }
        }
        Some(pkt)
    }

    /// netem_dequeue's first slot step: a slot that opened before the head packet is
    /// due is of no use to it, so draw the next one from `now`. netem runs this on
    /// every dequeue attempt, including the one right after each enqueue.
    fn refresh_slot(&mut self, now: u64) {
        let head_due = self.tfifo.keys().next().map(|&(due, _)| due);
        if let (Some(slot), Some(due)) = (self.slot, head_due) {
            if slot.next < due {
                self.next_slot(now);
            }
        }
    }

    /// netem's get_slot_next: the next slot opens a random time after `now`.
    fn next_slot(&mut self, now: u64) {
        let Some(config) = self.p.slot else { return };
        let delay = match config.delay {
            SlotDelay::Range { min_ns, max_ns } => {
                min_ns + ((self.rng.next_u32() as u128 * (max_ns - min_ns) as u128) >> 32) as u64
            }
            SlotDelay::Table {
                distribution,
                delay_ns,
                jitter_ns,
            } => {
                let jitter = jitter_ns.min(MAX_JITTER_NS) as i64;
                dist::tabledist(delay_ns as i64, jitter, self.rng.next_u32(), dist::table(distribution)).max(0) as u64
            }
        };
        self.slot = Some(SlotState {
            next: now.saturating_add(delay),
            packets_left: slot_packets(&config),
            bytes_left: slot_bytes(&config),
        });
    }

    /// One pass of netem_enqueue; the duplicate's own pass has `may_duplicate` false.
    fn netem_enqueue(&mut self, now: u64, mut pkt: Departure, range: &Range<usize>, may_duplicate: bool) -> Verdict {
        let duplicate =
            may_duplicate && self.p.duplicate != 0 && self.p.duplicate >= self.p.dup_cor.next(&mut self.rng);
        let lost = self.p.loss.lose(&mut self.rng);
        match (duplicate, lost) {
            (false, true) => Verdict {
                original: Fate::Lost,
                duplicate: None,
            },
            (true, true) => {
                // One copy goes on, through the rest of the original's path.
                pkt.duplicate = true;
                let (fate, _) = self.corrupt_limit_schedule(now, pkt, range, None);
                Verdict {
                    original: Fate::Lost,
                    duplicate: Some(fate),
                }
            }
            (dup, false) => {
                let clone = dup.then(|| Departure {
                    duplicate: true,
                    ..pkt.clone()
                });
                let (original, duplicate) = self.corrupt_limit_schedule(now, pkt, range, clone);
                Verdict { original, duplicate }
            }
        }
    }

    /// Steps 4-8 for a surviving packet, with its duplicate's pass in netem's place.
    fn corrupt_limit_schedule(
        &mut self,
        now: u64,
        mut pkt: Departure,
        range: &Range<usize>,
        clone: Option<Departure>,
    ) -> (Fate, Option<Fate>) {
        if self.p.corrupt != 0 && self.p.corrupt >= self.p.corrupt_cor.next(&mut self.rng) {
            pkt.corrupted = self.flip_one_bit(&mut pkt.data, range);
        }
        if self.queue_len() >= self.p.limit {
            return (Fate::QueueDrop, clone.map(|_| Fate::QueueDrop));
        }
        let dup_fate = clone.map(|c| self.netem_enqueue(now, c, range, false).original);
        if self.queue_len() >= self.p.limit {
            return (Fate::QueueDrop, dup_fate);
        }
        let corrupted = pkt.corrupted;
        let reordered = self.schedule(now, pkt);
        (Fate::Queued { corrupted, reordered }, dup_fate)
    }

    /// Flip one random bit inside `range` (clipped to the packet); false if it is empty.
    fn flip_one_bit(&mut self, data: &mut [u8], range: &Range<usize>) -> bool {
        let (start, end) = (range.start.min(data.len()), range.end.min(data.len()));
        if start >= end {
            return false;
        }
        let i = start + self.rng.below((end - start) as u64) as usize;
        data[i] ^= 1 << self.rng.below(8);
        true
    }

    /// Reorder or delay; returns true when the packet was reordered (sent at once).
    fn schedule(&mut self, now: u64, mut pkt: Departure) -> bool {
        let p = &mut self.p;
        let reorder = p.gap != 0 && self.counter >= p.gap - 1 && p.reorder >= p.reorder_cor.next(&mut self.rng);
        if reorder {
            pkt.due = now;
            self.counter = 0;
            self.head.push_front(pkt);
            return true;
        }
        // tabledist draws a random number only when there is jitter.
        let rnd = if p.jitter != 0 {
            p.delay_cor.next(&mut self.rng)
        } else {
            0
        };
        // Signed and wide: jitter may make the delay negative, and clocks may be large.
        let mut delay = dist::tabledist(p.latency, p.jitter, rnd, p.table) as i128;
        let mut start = now as i128;
        if let Some(rate) = self.p.rate {
            // Serialise behind the last packet held: the time until it leaves counts
            // against this packet's delay.
            if let Some(last) = self.last_due() {
                delay = (delay - (last as i128 - now as i128)).max(0);
                start = last as i128;
            }
            delay += self.transmit_ns(&rate, pkt.data.len()) as i128;
        }
        // Jitter larger than the delay can put the time in the past: netem then sends at
        // once, and so do we (never before arrival, so `due - arrived` is the time held).
        pkt.due = (start + delay).clamp(now as i128, u64::MAX as i128) as u64;
        self.counter = self.counter.wrapping_add(1);
        self.arrivals += 1;
        self.tfifo.insert((pkt.due, self.arrivals), pkt);
        false
    }

    /// The latest due time among packets held (netem's tfifo tail or queue tail).
    fn last_due(&self) -> Option<u64> {
        let t = self.tfifo.keys().next_back().map(|&(due, _)| due);
        let h = self.head.iter().map(|p| p.due).max();
        t.max(h)
    }

    /// netem's packet_time_ns: serialisation time of `len` bytes at `rate`.
    fn transmit_ns(&self, rate: &Rate, len: usize) -> u64 {
        let mut bytes = (len as i64 + self.wire_overhead as i64 + rate.packet_overhead as i64).max(0) as u64;
        if rate.cell_size > 0 {
            let cells = bytes.div_ceil(rate.cell_size as u64);
            bytes = (cells as i64 * (rate.cell_size as i64 + rate.cell_overhead as i64)).max(0) as u64;
        }
        (bytes as u128 * 1_000_000_000 / rate.bytes_per_sec as u128) as u64
    }
}

impl Draws {
    fn new(spec: &NetemSpec, seed: u64) -> Draws {
        let seed = spec.seed.map_or(seed, reverse_of);
        let mut rng = Rng::new(seed);
        let p = Params::new(spec, &mut rng);
        Draws {
            rng,
            p,
            keys: Keys::new(seed),
        }
    }
}

/// The reverse direction's seed on a shared queue whose spec gives a `seed`.
fn reverse_of(seed: u64) -> u64 {
    seed ^ 0x9e37_79b9_7f4a_7c15
}

/// netem_change's slot setup: the first slot is open at once.
fn open_slot(p: &Params) -> Option<SlotState> {
    p.slot.map(|c| SlotState {
        next: 0,
        packets_left: slot_packets(&c),
        bytes_left: slot_bytes(&c),
    })
}

/// netem treats 0 (not given) as no limit.
fn slot_packets(c: &Slot) -> i64 {
    if c.packets == 0 {
        i64::MAX
    } else {
        c.packets as i64
    }
}

fn slot_bytes(c: &Slot) -> i64 {
    if c.bytes == 0 {
        i64::MAX
    } else {
        c.bytes as i64
    }
}
