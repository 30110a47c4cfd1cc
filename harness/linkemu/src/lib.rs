//! linkemu: tc-netem semantics in user space.
//!
//! The netem pipeline (`spec`, `rng`, `dist`, `loss`, `link`) is sans-IO: it is fed
//! packets and the current time and asked what leaves when; `summary` tells the harness
//! what a spec means for planning (delay, rate, long-run loss). The I/O side (`udp`,
//! `tun`, `event`, `control`, `stats`, `pcap`, `trace`) runs it on real sockets and TUN devices.

// netem semantics (sans-IO)
pub mod dist;
pub mod link;
pub mod loss;
pub mod rng;
pub mod spec;
pub mod summary;

// I/O around it
pub mod checksum;
pub mod config;
pub mod control;
pub mod event;
pub mod pcap;
pub mod stats;
pub mod sys;
pub mod trace;
pub mod tun;
pub mod udp;
