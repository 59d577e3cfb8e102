//! `weft-sim`: a whole weft fabric without hardware.
//!
//! `cargo run --release` at the workspace root runs this binary's default
//! scenario, the reference experiment of `shared/REFERENCE.md`: two hosts,
//! four weft switches, four GPUs and one NVMe drive with SR-IOV. Until the
//! fabric models land it states that experiment and the link budget it will
//! be measured against, computed by `weft-pcie`'s link-rate model.

use weft_pcie::link::{max_payload_throughput, Link, LinkSpeed, LinkWidth, TlpKind};
use weft_pcie::split::PayloadSize;

/// The reference experiment's links: GPUs and switches at PCIe Gen3 x16.
const REFERENCE_LINK: Link = Link::new(LinkSpeed::Gen3, LinkWidth::X16);

fn main() {
    println!("weft-sim: the fabric simulator is not built yet.");
    println!("This command will run the reference experiment: two hosts, four weft switches,");
    println!("four GPUs (bound to host 1) and one NVMe drive with SR-IOV; rebind two GPUs");
    println!("to host 2, bind one NVMe virtual function to each host, and measure GPU");
    println!("peer-to-peer bandwidth across the fabric.");
    println!();
    println!(
        "Link budget per direction on {REFERENCE_LINK} ({:.2} GB/s after encoding), 64-bit memory writes:",
        REFERENCE_LINK.raw_bytes_per_sec() / 1e9
    );
    println!(
        "{:>6} {:>11} {:>14} {:>22}",
        "MPS", "efficiency", "TLPs only", "with DLLPs and SKPs"
    );
    for mps in [PayloadSize::B128, PayloadSize::B256, PayloadSize::B512] {
        let rate = max_payload_throughput(REFERENCE_LINK, mps, TlpKind::MemWrite64);
        println!(
            "{:>4} B {:>10.1}% {:>9.2} GB/s {:>17.2} GB/s",
            mps.bytes(),
            rate.efficiency * 100.0,
            rate.tlp_limited / 1e9,
            rate.with_link_overhead / 1e9
        );
    }
    println!("Published for the same class of link (shared/REFERENCE.md): Switchtec PAX GPU P2P");
    println!("12.8 GB/s unidirectional, 24.9 GB/s bidirectional.");
}
