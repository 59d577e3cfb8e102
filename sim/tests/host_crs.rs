//! A device still booting answers configuration requests with Request
//! Retry Status; with CRS Software Visibility the enumerator sees Vendor
//! ID 0001h and backs off 1, 2, 4, … ms as Linux does (PCIe Base 6.0
//! §2.3.2, §6.6.1).

mod host_support;

use std::time::Duration;

use host_support::{Model, Wire};
use weft_pcie::Bdf;
use weft_sim::host::{Host, HostConfig};

#[test]
fn a_booting_gpu_is_found_after_retries() {
    let mut wire = Wire::new(1);
    wire.plug(0, Model::booting_gpu(Duration::from_millis(100)));
    let mut host = Host::new(HostConfig::default());
    host.boot(&mut wire).expect("boot");
    // Reads at ~0, 1, 3, 7, 15, 31, 63 ms see RRS; the read at ~127 ms
    // finds the GPU ready (it was ready from 100 ms).
    let stats = host.scan_stats();
    assert_eq!(stats.rrs_retries, 7);
    assert_eq!(stats.rrs_wait, Duration::from_millis(127));
    assert!(host.gpu(Bdf::new(3, 0, 0)).is_some());
}

#[test]
fn a_device_that_never_boots_is_left_out() {
    let mut wire = Wire::new(1);
    wire.plug(0, Model::booting_gpu(Duration::from_secs(5)));
    let config = HostConfig {
        crs_timeout: Duration::from_millis(20),
        ..HostConfig::default()
    };
    let mut host = Host::new(config);
    host.boot(&mut wire).expect("boot");
    // Sleeps of 1 + 2 + 4 + 8 + 16 ms pass 20 ms: five retries, then out.
    assert_eq!(host.scan_stats().rrs_retries, 5);
    assert!(host.tree().get(Bdf::new(3, 0, 0)).is_none());
    assert!(host.tree().get(Bdf::new(2, 0, 0)).is_some());
}
