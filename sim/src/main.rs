//! `weft-sim`: a whole weft fabric without hardware.
//!
//! `cargo run --release` at the workspace root runs this binary's default
//! scenario, the reference experiment of `shared/REFERENCE.md`: two hosts,
//! four weft switches, four GPUs and one NVMe drive with SR-IOV.

fn main() {
    println!("weft-sim: the fabric simulator is not built yet.");
    println!("This command will run the reference experiment: two hosts, four weft switches,");
    println!("four GPUs (bound to host 1) and one NVMe drive with SR-IOV; rebind two GPUs");
    println!("to host 2, bind one NVMe virtual function to each host, and measure GPU");
    println!("peer-to-peer bandwidth across the fabric.");
}
