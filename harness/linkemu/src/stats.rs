//! Per-direction counters, bounded histograms and the stats JSON of
//! docs/reference/interfaces.md ("Stats").
//!
//! Memory is bounded whatever the traffic: histograms have a fixed number of buckets
//! and the set of payload hashes behind `repeats` forgets its oldest entries.

use std::collections::{HashSet, VecDeque};
use std::hash::{Hash, Hasher};

use serde_json::{json, Value};

/// Log-linear histogram of microsecond values: exact below 256 µs, then 256 buckets per
/// power of two (within 0.2%: 20 ms is told from 20.04 ms), up to 2^40 µs. Fixed size
/// (~70 KB), so memory is bounded.
#[derive(Clone)]
pub struct Histogram {
    counts: Vec<u64>,
    n: u64,
    sum: f64,
    max: u64,
}

const SUB_BITS: u32 = 8; // 2^SUB_BITS buckets per power of two
const EXACT: u64 = 1 << SUB_BITS; // values below this have their own bucket
const MAX_POW: u32 = 40;

impl Default for Histogram {
    fn default() -> Self {
        let buckets = EXACT as usize + (((MAX_POW - SUB_BITS) as usize) << SUB_BITS);
        Histogram {
            counts: vec![0; buckets],
            n: 0,
            sum: 0.0,
            max: 0,
        }
    }
}

impl Histogram {
    fn bucket(v: u64) -> usize {
        if v < EXACT {
            return v as usize;
        }
        let v = v.min((1u64 << MAX_POW) - 1);
        let pow = 63 - v.leading_zeros(); // >= SUB_BITS
        let sub = (v >> (pow - SUB_BITS)) & (EXACT - 1);
        EXACT as usize + (((pow - SUB_BITS) as usize) << SUB_BITS) + sub as usize
    }

    /// Midpoint of a bucket, the value reported for quantiles that fall in it.
    fn value(b: usize) -> f64 {
        if b < EXACT as usize {
            return b as f64;
        }
        let rel = b - EXACT as usize;
        let pow = (rel >> SUB_BITS) as u32 + SUB_BITS;
        let sub = (rel as u64) & (EXACT - 1);
        let width = 1u64 << (pow - SUB_BITS);
        let low = (1u64 << pow) + sub * width;
        low as f64 + (width as f64 - 1.0) / 2.0
    }

    pub fn record(&mut self, v: u64) {
        self.counts[Self::bucket(v)] += 1;
        self.n += 1;
        self.sum += v as f64;
        self.max = self.max.max(v);
    }

    pub fn count(&self) -> u64 {
        self.n
    }

    pub fn quantile(&self, q: f64) -> Option<f64> {
        if self.n == 0 {
            return None;
        }
        let rank = ((q * self.n as f64).ceil() as u64).clamp(1, self.n);
        let mut seen = 0;
        for (b, &c) in self.counts.iter().enumerate() {
            seen += c;
            if seen >= rank {
                return Some(Self::value(b).min(self.max as f64));
            }
        }
        Some(self.max as f64)
    }

    pub fn mean(&self) -> Option<f64> {
        (self.n > 0).then(|| self.sum / self.n as f64)
    }

    pub fn max(&self) -> Option<u64> {
        (self.n > 0).then_some(self.max)
    }

    pub fn merge(&mut self, other: &Histogram) {
        for (a, b) in self.counts.iter_mut().zip(&other.counts) {
            *a += b;
        }
        self.n += other.n;
        self.sum += other.sum;
        self.max = self.max.max(other.max);
    }
}

/// Remembers hashes of recently seen payloads to count repeats (retransmissions on
/// the wire). Bounded: past `capacity` entries the oldest are forgotten, so a repeat
/// of a very old payload is missed, never memory growth.
pub struct SeenPayloads {
    set: HashSet<u64>,
    order: VecDeque<u64>,
    capacity: usize,
}

impl SeenPayloads {
    pub fn new(capacity: usize) -> Self {
        SeenPayloads {
            set: HashSet::new(),
            order: VecDeque::new(),
            capacity,
        }
    }

    /// Record `key`; true when it had been seen before.
    pub fn check_and_insert(&mut self, key: u64) -> bool {
        if !self.set.insert(key) {
            return true;
        }
        self.order.push_back(key);
        if self.order.len() > self.capacity {
            if let Some(old) = self.order.pop_front() {
                self.set.remove(&old);
            }
        }
        false
    }
}

/// 64-bit hash of the parts of a payload (e.g. a TCP sequence number and its data).
pub fn payload_hash(parts: &[&[u8]]) -> u64 {
    let mut h = std::collections::hash_map::DefaultHasher::new();
    for p in parts {
        p.hash(&mut h);
    }
    h.finish()
}

/// Counters for one direction of one path.
#[derive(Clone, Default)]
pub struct DirStats {
    pub packets_in: u64,
    pub bytes_in: u64,
    pub delivered: u64,
    pub bytes_delivered: u64,
    pub lost: u64,
    pub corrupted: u64,
    pub duplicated: u64,
    pub reordered: u64,
    pub queue_drops: u64,
    pub down_drops: u64,
    pub repeats: u64,
    /// `repeats` as it stood at `last_fresh_out_ns`: the resends that came in before the
    /// data stopped arriving, not those into the void after it.
    pub repeats_to_last_fresh: u64,
    /// `repeats` as it stood at the other direction's last transport delivery: the
    /// resends its receiver still answered, as Go-Back-N's resent tail, which brings
    /// the link nothing fresh but the receiver what it had discarded.
    pub repeats_to_last_answer: u64,
    /// Packets the engine could not take in or hand on: oversized or truncated reads,
    /// clients beyond the limit, send errors (e.g. ECONNREFUSED from the target).
    pub io_errors: u64,
    pub first_in_ns: Option<u64>,
    pub last_in_ns: Option<u64>,
    pub last_out_ns: Option<u64>,
    /// The last delivery of a UDP or TCP packet (not an ICMP error).
    pub last_transport_out_ns: Option<u64>,
    /// The last delivery of one that was fresh: an intact payload not delivered before,
    /// or no payload. Where a transfer's data stopped arriving, whatever was resent after it.
    pub last_fresh_out_ns: Option<u64>,
    pub lag_us: Histogram,
    pub delay_us: Histogram,
}

impl DirStats {
    pub fn arrived(&mut self, now_ns: u64, len: usize) {
        self.packets_in += 1;
        self.bytes_in += len as u64;
        self.first_in_ns.get_or_insert(now_ns);
        self.last_in_ns = Some(now_ns);
    }

    /// A packet left the link at `now_ns`; it was due at `due_ns` and came in at `in_ns`.
    pub fn departed(&mut self, now_ns: u64, len: usize, due_ns: u64, in_ns: u64) {
        self.delivered += 1;
        self.bytes_delivered += len as u64;
        self.last_out_ns = Some(now_ns);
        self.lag_us.record(now_ns.saturating_sub(due_ns) / 1000);
        self.delay_us.record(now_ns.saturating_sub(in_ns) / 1000);
    }

    pub fn merge(&mut self, o: &DirStats) {
        self.packets_in += o.packets_in;
        self.bytes_in += o.bytes_in;
        self.delivered += o.delivered;
        self.bytes_delivered += o.bytes_delivered;
        self.lost += o.lost;
        self.corrupted += o.corrupted;
        self.duplicated += o.duplicated;
        self.reordered += o.reordered;
        self.queue_drops += o.queue_drops;
        self.down_drops += o.down_drops;
        self.repeats += o.repeats;
        self.repeats_to_last_fresh += o.repeats_to_last_fresh;
        self.repeats_to_last_answer += o.repeats_to_last_answer;
        self.io_errors += o.io_errors;
        self.first_in_ns = opt_min(self.first_in_ns, o.first_in_ns);
        self.last_in_ns = self.last_in_ns.max(o.last_in_ns);
        self.last_out_ns = self.last_out_ns.max(o.last_out_ns);
        self.last_transport_out_ns = self.last_transport_out_ns.max(o.last_transport_out_ns);
        self.last_fresh_out_ns = self.last_fresh_out_ns.max(o.last_fresh_out_ns);
        self.lag_us.merge(&o.lag_us);
        self.delay_us.merge(&o.delay_us);
    }

    pub fn to_json(&self) -> Value {
        let q = |h: &Histogram, p: f64| h.quantile(p).map(round1);
        json!({
            "packets_in": self.packets_in,
            "bytes_in": self.bytes_in,
            "delivered": self.delivered,
            "bytes_delivered": self.bytes_delivered,
            "lost": self.lost,
            "corrupted": self.corrupted,
            "duplicated": self.duplicated,
            "reordered": self.reordered,
            "queue_drops": self.queue_drops,
            "down_drops": self.down_drops,
            "repeats": self.repeats,
            "repeats_to_last_fresh": self.repeats_to_last_fresh,
            "repeats_to_last_answer": self.repeats_to_last_answer,
            "io_errors": self.io_errors,
            "first_in_ns": self.first_in_ns,
            "last_in_ns": self.last_in_ns,
            "last_out_ns": self.last_out_ns,
            "last_transport_out_ns": self.last_transport_out_ns,
            "last_fresh_out_ns": self.last_fresh_out_ns,
            "lag_us": {"p50": q(&self.lag_us, 0.5), "p99": q(&self.lag_us, 0.99), "max": self.lag_us.max()},
            "delay_us": {"p50": q(&self.delay_us, 0.5), "p99": q(&self.delay_us, 0.99),
                         "mean": self.delay_us.mean().map(round1)},
        })
    }
}

fn opt_min(a: Option<u64>, b: Option<u64>) -> Option<u64> {
    match (a, b) {
        (Some(x), Some(y)) => Some(x.min(y)),
        (x, None) => x,
        (None, y) => y,
    }
}

fn round1(v: f64) -> f64 {
    (v * 10.0).round() / 10.0
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn histogram_quantiles_within_bucket_error() {
        let mut h = Histogram::default();
        for v in 1..=10_000u64 {
            h.record(v);
        }
        let p50 = h.quantile(0.5).unwrap();
        let p99 = h.quantile(0.99).unwrap();
        assert!((p50 - 5000.0).abs() / 5000.0 < 0.003, "p50 {p50}");
        assert!((p99 - 9900.0).abs() / 9900.0 < 0.003, "p99 {p99}");
        assert_eq!(h.max(), Some(10_000));
        assert_eq!(h.mean(), Some(5000.5));
    }

    #[test]
    fn histogram_resolves_20ms_to_within_40us() {
        let mut h = Histogram::default();
        h.record(20_000);
        assert!((h.quantile(0.5).unwrap() - 20_000.0).abs() <= 40.0);
    }

    #[test]
    fn histogram_small_values_exact_and_huge_values_clamped() {
        let mut h = Histogram::default();
        h.record(7);
        h.record(255);
        assert_eq!(h.quantile(0.5), Some(7.0));
        assert_eq!(h.quantile(1.0), Some(255.0));
        h.record(u64::MAX);
        assert_eq!(h.max(), Some(u64::MAX));
        assert!(h.quantile(1.0).unwrap() > 1e11);
    }

    #[test]
    fn empty_histogram_gives_nulls() {
        let s = DirStats::default().to_json();
        assert!(s["lag_us"]["p50"].is_null());
        assert!(s["first_in_ns"].is_null());
    }

    #[test]
    fn seen_payloads_counts_repeats_and_forgets_oldest() {
        let mut s = SeenPayloads::new(2);
        assert!(!s.check_and_insert(1));
        assert!(s.check_and_insert(1));
        assert!(!s.check_and_insert(2));
        assert!(!s.check_and_insert(3)); // forgets 1
        assert!(!s.check_and_insert(1));
        assert!(s.check_and_insert(3));
    }

    #[test]
    fn merge_sums_and_keeps_extremes() {
        let mut a = DirStats::default();
        let mut b = DirStats::default();
        a.arrived(100, 10);
        b.arrived(50, 20);
        b.departed(80, 20, 70, 50);
        a.merge(&b);
        assert_eq!(a.packets_in, 2);
        assert_eq!(a.bytes_in, 30);
        assert_eq!(a.first_in_ns, Some(50));
        assert_eq!(a.last_in_ns, Some(100));
        assert_eq!(a.last_out_ns, Some(80));
        assert_eq!(a.delay_us.count(), 1);
    }
}
