//! `rate` and `limit`: serialisation spacing, long-run rate, overheads, the queue
//! bound, and that loss happens before the rate queue.

mod common;
use common::*;
use linkemu::link::{Fate, Link, WIRE_OVERHEAD_IP, WIRE_OVERHEAD_UDP4, WIRE_OVERHEAD_UDP6};

const US: u64 = 1_000;
const MS: u64 = 1_000_000;

fn link(s: &str) -> Link {
    Link::new(spec(s), 1)
}

fn dues(link: &mut Link) -> Vec<u64> {
    std::iter::from_fn(|| link.dequeue(u64::MAX)).map(|d| d.due).collect()
}

#[test]
fn back_to_back_packets_leave_one_serialisation_time_apart() {
    // 1000 bytes at 10 Mbit/s = 800 µs each.
    let mut l = link("rate 10mbit");
    for _ in 0..100 {
        l.enqueue(0, vec![0; 1000], 0..0, 0);
    }
    let d = dues(&mut l);
    assert_eq!(d, (1..=100).map(|k| k * 800 * US).collect::<Vec<_>>());
}

#[test]
fn wire_overhead_counts_like_netem_on_lo() {
    // A 958-byte UDP payload over IPv4 is 1000 bytes on lo (14 + 20 + 8 + 958).
    for (overhead, payload) in [
        (WIRE_OVERHEAD_UDP4, 958),
        (WIRE_OVERHEAD_UDP6, 938),
        (WIRE_OVERHEAD_IP, 986),
    ] {
        let mut l = link("rate 10mbit");
        l.set_wire_overhead(overhead);
        l.enqueue(0, vec![0; payload], 0..0, 0);
        l.enqueue(0, vec![0; payload], 0..0, 0);
        assert_eq!(dues(&mut l), vec![800 * US, 1600 * US]);
    }
}

#[test]
fn packet_and_cell_overheads_as_netem() {
    // (1000 + 20) bytes → ceil(1020/100) = 11 cells of 100 + 10 → 1210 bytes at 1 Mbit/s.
    let mut l = link("rate 1mbit 20 100 10");
    l.enqueue(0, vec![0; 1000], 0..0, 0);
    assert_eq!(dues(&mut l), vec![1210 * 8 * US]);
    // A negative packet overhead shrinks the packet: 1000 - 200 = 800 bytes.
    let mut l = link("rate 1mbit -200");
    l.enqueue(0, vec![0; 1000], 0..0, 0);
    assert_eq!(dues(&mut l), vec![800 * 8 * US]);
}

#[test]
fn long_run_rate_equals_the_setting_when_saturated() {
    // Offered 1000-byte packets every 500 µs at 10 Mbit/s (800 µs each): the queue
    // fills, the excess is tail-dropped, and what leaves leaves at exactly 10 Mbit/s.
    let mut l = link("rate 10mbit limit 100");
    let r = run(&mut l, 100_000, 500 * US, 1000);
    let out = &r.departures;
    let drops = r.verdicts.iter().filter(|v| v.original == Fate::QueueDrop).count();
    assert!(drops > 30_000, "{drops} drops");
    assert!(
        out.windows(2).all(|w| w[1].due - w[0].due == 800 * US),
        "gaps are exactly t_ser"
    );
    let bits = (out.len() - 1) as f64 * 8000.0;
    let secs = (out.last().unwrap().due - out[0].due) as f64 / 1e9;
    assert!((bits / secs / 10e6 - 1.0).abs() < 1e-9);
}

#[test]
fn under_capacity_each_packet_costs_only_its_serialisation() {
    let mut l = link("delay 5ms rate 10mbit");
    let r = run(&mut l, 1000, MS, 1000);
    assert!(r.departures.iter().all(|d| d.due - d.arrived == 5 * MS + 800 * US));
}

#[test]
fn rate_queues_behind_the_last_packet_not_behind_the_delay() {
    // due = max(last_due, now + delay) + t_ser.
    let mut l = link("delay 10ms rate 10mbit");
    l.enqueue(0, vec![0; 1000], 0..0, 0); // 10.8 ms
    l.enqueue(MS, vec![0; 1000], 0..0, 0); // max(10.8, 11) + 0.8 = 11.8 ms
    l.enqueue(MS, vec![0; 1000], 0..0, 0); // max(11.8, 11) + 0.8 = 12.6 ms
    assert_eq!(dues(&mut l), vec![10_800 * US, 11_800 * US, 12_600 * US]);
}

#[test]
fn lost_packets_cost_no_capacity() {
    let mut l = link("loss 50% rate 10mbit");
    let mut queued = 0;
    for _ in 0..1000 {
        queued += l.enqueue(0, vec![0; 1000], 0..0, 0).queued();
    }
    assert!(queued > 400 && queued < 600);
    let d = dues(&mut l);
    assert_eq!(d, (1..=queued as u64).map(|k| k * 800 * US).collect::<Vec<_>>());
}

#[test]
fn with_rate_jitter_does_not_reorder() {
    let mut l = link("delay 10ms 5ms distribution normal rate 100mbit");
    let r = run(&mut l, 20_000, 100 * US, 500);
    assert!(r
        .departures
        .windows(2)
        .all(|w| packet_number(&w[0]) < packet_number(&w[1])));
}

#[test]
fn limit_tail_drops_and_bounds_the_queue() {
    let mut l = link("delay 1s limit 10");
    let fates: Vec<Fate> = (0..20).map(|i| l.enqueue(i, vec![i as u8], 0..1, 0).original).collect();
    assert!(fates[..10].iter().all(|f| f.is_queued()));
    assert!(fates[10..].iter().all(|&f| f == Fate::QueueDrop));
    assert_eq!(l.queue_len(), 10);
    // Room again once packets leave.
    assert!(l.dequeue(1_000_000_000).is_some());
    assert!(l.enqueue(1_000_000_001, vec![0], 0..1, 0).original.is_queued());
}

#[test]
fn default_limit_is_1000_and_holds_with_duplicates() {
    let mut l = link("delay 1s duplicate 50%");
    for i in 0..5000 {
        l.enqueue(i, vec![0; 10], 0..10, 0);
        assert!(l.queue_len() <= 1000);
    }
    assert_eq!(l.queue_len(), 1000);
}

#[test]
fn next_due_and_dequeue_agree() {
    let mut l = link("delay 10ms 3ms");
    for i in 0..100 {
        l.enqueue(i * 100 * US, vec![0; 10], 0..10, 0);
    }
    let mut last = 0;
    while let Some(t) = l.next_due() {
        assert!(t >= last);
        assert!(l.dequeue(t - 1).is_none() || t == 0);
        let d = l.dequeue(t).unwrap();
        assert_eq!(d.due, t);
        last = t;
    }
    assert_eq!(l.queue_len(), 0);
}
