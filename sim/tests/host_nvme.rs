//! The NVMe driver on the PF and, after the host enables SR-IOV the way
//! `sriov_numvfs` does, on a VF: same driver, separate namespaces.

mod host_support;

use host_support::{Model, Wire};
use weft_pcie::Bdf;
use weft_sim::host::tree::InterruptSetup;
use weft_sim::host::{Host, HostConfig};

const PF: Bdf = Bdf::new(3, 0, 0);

fn booted() -> (Host, Wire) {
    let mut wire = Wire::new(1);
    wire.plug(0, Model::nvme());
    let mut host = Host::new(HostConfig::default());
    host.boot(&mut wire).expect("boot");
    (host, wire)
}

fn pattern(len: usize, seed: u8) -> Vec<u8> {
    (0..len).map(|i| (i as u8) ^ seed).collect()
}

#[test]
fn pf_writes_and_reads_blocks() {
    let (mut host, mut wire) = booted();
    // 64 KiB: 16 pages, so the command needs a PRP list (NVMe Base 2.0 §4.1.1).
    let data = pattern(64 << 10, 0x5a);
    host.nvme_write(&mut wire, PF, 10, &data).expect("write");
    assert_eq!(
        wire.nvme(0)
            .namespace(None)
            .expect("PF namespace")
            .read(10 * 512, data.len()),
        data
    );
    let back = host
        .nvme_read(&mut wire, PF, 10, data.len() as u64)
        .expect("read");
    assert_eq!(back, data);
    let small = pattern(512, 1);
    host.nvme_write(&mut wire, PF, 0, &small)
        .expect("write one block");
    assert_eq!(host.nvme_read(&mut wire, PF, 0, 512).expect("read"), small);
}

#[test]
fn vf_works_with_the_same_driver() {
    let (mut host, mut wire) = booted();
    let vfs = host.set_num_vfs(&mut wire, PF, 2).expect("enable VFs");
    // First VF Offset 1, VF Stride 1 (§9.3.3.9-10).
    assert_eq!(vfs, [Bdf::new(3, 0, 1), Bdf::new(3, 0, 2)]);
    let vf = vfs[0];
    let function = host.tree().get(vf).expect("VF enumerated");
    assert_eq!(function.physical_function, Some(PF));
    assert_eq!((function.vendor_id, function.device_id), (0x144d, 0xa824));
    // VF 1's BAR0 is the VF BAR0 the host placed; VF 2's follows it.
    assert_eq!(function.bar(0).and_then(|b| b.address), Some(0x8000_4000));
    let second = host.tree().get(vfs[1]).expect("VF 2");
    assert_eq!(second.bar(0).and_then(|b| b.address), Some(0x8000_8000));
    assert!(matches!(&function.interrupts, InterruptSetup::MsiX { vectors } if vectors.len() == 2));
    assert!(host.nvme(vf).is_some(), "the NVMe driver bound to the VF");

    let data = pattern(8 << 10, 0xc3);
    host.nvme_write(&mut wire, vf, 4, &data).expect("VF write");
    assert_eq!(
        host.nvme_read(&mut wire, vf, 4, data.len() as u64)
            .expect("VF read"),
        data
    );
    let nvme = wire.nvme(0);
    assert_eq!(
        nvme.namespace(Some(1))
            .expect("VF 1")
            .read(4 * 512, data.len()),
        data
    );
    assert_eq!(
        nvme.namespace(None).expect("PF").read(4 * 512, data.len()),
        vec![0; data.len()],
        "the PF's namespace is separate"
    );
    // The PF keeps working next to its VFs.
    host.nvme_write(&mut wire, PF, 4, &pattern(512, 9))
        .expect("PF write");

    // Back to zero VFs: functions and drivers go away.
    host.set_num_vfs(&mut wire, PF, 0).expect("disable VFs");
    assert!(host.tree().get(vf).is_none());
    assert!(host.nvme(vf).is_none());
    assert_eq!(wire.nvme(0).active_vfs(), 0);
}
