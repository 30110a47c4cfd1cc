//! `slot`: packets leave only when a slot opens, at most N packets / B bytes per slot.

mod common;
use common::*;
use linkemu::link::Link;

const MS: u64 = 1_000_000;

fn back_to_back(s: &str, n: usize, size: usize) -> Vec<(u64, u64)> {
    let mut link = Link::new(spec(s), 1);
    for i in 0..n {
        let mut data = vec![0u8; size];
        data[..8].copy_from_slice(&(i as u64).to_be_bytes());
        link.enqueue(0, data, 0..0, 0);
    }
    drain(&mut link)
}

#[test]
fn a_slot_lets_out_at_most_its_packets() {
    let out = back_to_back("slot 10ms packets 2", 10, 100);
    let times: Vec<u64> = out.iter().map(|o| o.0 / MS).collect();
    assert_eq!(times, vec![0, 0, 10, 10, 20, 20, 30, 30, 40, 40]);
    assert!(out.iter().enumerate().all(|(i, o)| o.1 == i as u64), "order kept");
}

#[test]
fn a_slot_lets_out_until_its_bytes_are_spent() {
    // 2500 bytes: 1000 + 1000 + 1000 (the third overdraws it, as in netem), then a new slot.
    let out = back_to_back("slot 10ms bytes 2500", 9, 1000);
    let times: Vec<u64> = out.iter().map(|o| o.0 / MS).collect();
    assert_eq!(times, vec![0, 0, 0, 10, 10, 10, 20, 20, 20]);
}

#[test]
fn slot_gaps_are_uniform_between_min_and_max() {
    let out = back_to_back("slot 5ms 15ms packets 1 limit 20000", 20_000, 10);
    let mut gaps: Vec<f64> = out.windows(2).map(|w| (w[1].0 - w[0].0) as f64 / MS as f64).collect();
    assert!(gaps.iter().all(|&g| (5.0..15.0).contains(&g)));
    let n = gaps.len();
    let d = ks_statistic(&mut gaps, |g| ((g - 5.0) / 10.0).clamp(0.0, 1.0));
    assert!(d < ks_critical(n, 0.001), "KS D = {d}");
}

#[test]
fn slot_gaps_follow_a_table() {
    let out = back_to_back("slot distribution normal 10ms 2ms packets 1 limit 20000", 20_000, 10);
    let mut z: Vec<f64> = out
        .windows(2)
        .map(|w| ((w[1].0 - w[0].0) as f64 - 10e6) / 2e6)
        .collect();
    let n = z.len();
    let d = ks_statistic(&mut z, linkemu::dist::normal_cdf);
    assert!(d < ks_critical(n, 0.001), "KS D = {d}");
}

#[test]
fn a_slot_that_opened_before_a_packet_was_due_is_redrawn() {
    // netem tries to dequeue right after each enqueue; a slot that opens before the
    // head packet is due is then replaced by one drawn from that moment.
    let mut link = Link::new(spec("delay 3ms slot 10ms"), 1);
    link.enqueue(0, vec![0; 8], 0..0, 0); // due 3 ms; slot redrawn at 0 -> opens at 10 ms
    assert_eq!(link.next_due(), Some(10 * MS));
    assert_eq!(drain(&mut link), vec![(10 * MS, 0)]);
    let mut data = vec![0u8; 8];
    data[7] = 1;
    link.enqueue(20 * MS, data, 0..0, 0); // due 23 ms; the 10 ms slot is stale -> opens at 30 ms
    assert_eq!(drain(&mut link), vec![(30 * MS, 1)]);
}

#[test]
fn without_slot_nothing_changes() {
    let out = back_to_back("delay 1ms", 5, 10);
    assert!(out.iter().all(|o| o.0 == MS));
}
