//! `weftctl`: manage a weft PCIe fabric switch over Ethernet.
//!
//! It speaks `weft-proto` over UDP to the firmware of a real switch or of a
//! simulated one, which the simulator exposes on a localhost port.

use clap::Parser;

/// Manage a weft PCIe fabric switch over Ethernet.
#[derive(Parser)]
#[command(name = "weftctl", version, about)]
struct Cli {
    /// The switch to manage, as host:port.
    #[arg(long, default_value_t = format!("127.0.0.1:{}", weft_proto::MANAGEMENT_UDP_PORT))]
    switch: String,
}

fn main() {
    let cli = Cli::parse();
    eprintln!(
        "weftctl: no management requests exist yet, so there is nothing to send to {}",
        cli.switch
    );
    std::process::exit(2);
}
