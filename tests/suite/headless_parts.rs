//! The headless mode's small parts: its memory budget and the connections its endpoints keep.

use std::net::IpAddr;

use ops_pod_cleaner::headless::sizing::{budget, describe};
use ops_pod_cleaner::headless::slots::{Slot, Slots};

#[test]
fn the_budget_is_2_kb_per_pod_and_40_mb() {
    assert_eq!(budget(0), 40_000_000);
    assert_eq!(budget(150_000), 340_000_000);
}

#[test]
fn a_limit_under_the_budget_says_what_to_raise_it_to() {
    let (line, short) = describe(300_000, Some(512 * 1024 * 1024));
    assert!(short);
    assert_eq!(
        line,
        "memory: 300000 pods watched; budget 640 MB (2 KB per pod + 40 MB); the memory \
         limit is 537 MB, under the budget: raise it to at least 640 MB \
         (resources.limits.memory), or the process may be OOMKilled as the cluster grows"
    );
    let (line, short) = describe(50_000, Some(512 * 1024 * 1024));
    assert!(!short);
    assert!(line.ends_with("budget 140 MB (2 KB per pod + 40 MB); memory limit 537 MB"));
    assert!(describe(10, None).0.ends_with("; no memory limit"));
}

fn ip(last: u8) -> IpAddr {
    IpAddr::from([10, 0, 0, last])
}

fn must_close(slot: &mut Slot) -> bool {
    slot.closed.try_recv().is_ok()
}

#[test]
fn one_address_over_its_share_replaces_its_own_oldest() {
    let slots = Slots::new(2, 10);
    let mut a1 = slots.admit(ip(1));
    let mut b1 = slots.admit(ip(2));
    let mut a2 = slots.admit(ip(1));
    let mut a3 = slots.admit(ip(1));
    assert!(must_close(&mut a1), "the oldest of 10.0.0.1 makes room");
    assert!(!must_close(&mut a2) && !must_close(&mut a3));
    assert!(!must_close(&mut b1), "another address is left alone");
}

#[test]
fn a_full_server_replaces_the_oldest_of_all() {
    let slots = Slots::new(4, 3);
    let mut first = slots.admit(ip(1));
    let mut second = slots.admit(ip(2));
    let mut third = slots.admit(ip(3));
    let mut fourth = slots.admit(ip(4));
    assert!(must_close(&mut first));
    for slot in [&mut second, &mut third, &mut fourth] {
        assert!(!must_close(slot));
    }
}

#[test]
fn a_closed_connection_gives_its_slot_back() {
    let slots = Slots::new(2, 2);
    let a1 = slots.admit(ip(1));
    let mut b1 = slots.admit(ip(2));
    drop(a1);
    let mut c1 = slots.admit(ip(3));
    assert!(!must_close(&mut b1), "room was free: nobody is closed");
    assert!(!must_close(&mut c1));
}
