//! A queue both directions share (netem on `lo`): one delay line and rate, a generator
//! per direction, so the k-th packet each way meets the same draws however the two
//! directions' packets interleave.

mod common;
use common::*;
use linkemu::link::{Fate, Link};

const MS: u64 = 1_000_000;

/// Each direction's packets' fates (lost or not), in its own order, when `reverse_after`
/// says after which forward packets a reverse packet arrives.
fn fates(link: &mut Link, forward: usize, reverse_after: impl Fn(usize) -> usize) -> (Vec<bool>, Vec<bool>) {
    let (mut fwd, mut rev) = (vec![], vec![]);
    let mut now = 0;
    for k in 0..forward {
        now += MS;
        fwd.push(link.enqueue(now, vec![0; 100], 0..0, k as u32).original == Fate::Lost);
        for _ in 0..reverse_after(k) {
            now += MS / 10;
            rev.push(link.enqueue_reverse(now, vec![1; 20], 0..0, 0).original == Fate::Lost);
        }
        while link.dequeue(now + 100 * MS).is_some() {}
    }
    (fwd, rev)
}

#[test]
fn each_direction_meets_the_same_draws_however_they_interleave() {
    let s = "loss 20% delay 5ms rate 10mbit";
    // an ACK after every data packet; then ACKs in bursts, none, and two at a time
    let (fwd_a, rev_a) = fates(&mut Link::shared(spec(s), 7, 8), 400, |_| 1);
    let (fwd_b, rev_b) = fates(&mut Link::shared(spec(s), 7, 8), 400, |k| [0, 3, 0, 0, 1][k % 5]);
    let (fwd_c, rev_c) = fates(&mut Link::shared(spec(s), 7, 8), 400, |k| 2 * (k % 2));
    assert_eq!(fwd_a, fwd_b);
    assert_eq!(fwd_a, fwd_c);
    let same_start = |x: &[bool], y: &[bool]| x[..x.len().min(y.len())] == y[..x.len().min(y.len())];
    assert!(rev_b.len() >= 300 && rev_c.len() >= 300);
    assert!(same_start(&rev_a, &rev_b) && same_start(&rev_a, &rev_c));
    // the same draws as a queue of its own with that seed, each way
    let (alone_fwd, _) = fates(&mut Link::new(spec(s), 7), 400, |_| 0);
    let (alone_rev, _) = fates(&mut Link::new(spec(s), 8), 400, |_| 0);
    assert_eq!(fwd_a, alone_fwd);
    assert!(same_start(&rev_a, &alone_rev));
    // and the two generators are not one: the directions' losses differ
    assert_ne!(fwd_a[..200], rev_a[..200]);
    let lost = fwd_a.iter().filter(|&&l| l).count();
    assert_binomial(s, lost, fwd_a.len(), 0.2);
}

#[test]
fn both_directions_wait_in_one_queue() {
    // 1000-byte packets at 1 Mbit/s take 8 ms each (plus the UDP/IP/Ethernet overhead
    // of 0 here): a reverse packet that arrives with a forward one leaves after it
    let mut link = Link::shared(spec("rate 1mbit"), 1, 2);
    assert!(link.enqueue(0, vec![0; 1000], 0..0, 1).original.is_queued());
    assert!(link.enqueue_reverse(0, vec![0; 1000], 0..0, 2).original.is_queued());
    let first = link.dequeue(u64::MAX).unwrap();
    let second = link.dequeue(u64::MAX).unwrap();
    assert_eq!((first.tag, second.tag), (1, 2));
    assert_eq!((first.due, second.due), (8 * MS, 16 * MS));
}

#[test]
fn a_seed_in_the_spec_seeds_both_directions_apart() {
    let s = "loss 50% seed 99";
    let (fwd_a, rev_a) = fates(&mut Link::shared(spec(s), 1, 2), 200, |_| 1);
    let (fwd_b, rev_b) = fates(&mut Link::shared(spec(s), 3, 4), 200, |_| 1);
    assert_eq!((&fwd_a, &rev_a), (&fwd_b, &rev_b)); // the spec's seed wins over the run's
    assert_ne!(fwd_a, rev_a);
}
