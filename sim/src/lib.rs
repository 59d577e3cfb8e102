//! A whole weft fabric without hardware.
//!
//! Hosts, endpoints, links, switches and firmware, driven in simulated
//! time: [`host`] the hosts, [`link`] the PCIe links, [`wiring`] what they
//! connect, [`switch`] a weft switch with its ports' management functions,
//! [`planes`] and [`manager_config`] the fabric manager's hardware,
//! [`world`] the whole system in simulated time, [`scenario`] a fabric and
//! a timeline of actions described in a TOML file and run on a world,
//! [`reference`](mod@reference) the reference experiment's published
//! figures, [`report`] a run's results table and JSON, and [`serve`] the
//! reference fabric as a virtual board managed over UDP; [`waveform`]
//! records chosen switches' ports as a Value Change Dump (`--vcd FILE`).
//!
//! [`iss_board`] runs the soft core's firmware ELF on the instruction-set
//! simulator with its SoC peripherals, and [`bridge`] connects that
//! board's management MAC to a Linux [`tap`] interface or a localhost
//! [`udp_gateway`] (`weft-sim firmware`); [`rtl_board`] runs the same
//! ELF on the RTL soft core (weft-hdl's SoC), and [`iss_manager`] makes
//! either board ([`firmware_board`]) the management CPU of a whole
//! simulated fabric. [`rtl_plane`] makes the RTL data plane carry a
//! switch's TLPs beside the model.
//!
//! The crate's one `unsafe` call is the `TUNSETIFF` ioctl in [`tap`].
#![deny(unsafe_code)]

pub mod bridge;
pub mod firmware_board;
pub mod host;
pub mod iss_board;
pub mod iss_manager;
pub mod link;
pub mod link_control;
pub mod manager_config;
pub mod planes;
pub mod reference;
pub mod report;
pub mod rtl_board;
pub mod rtl_plane;
pub mod scenario;
pub mod serve;
pub mod switch;
pub mod tap;
pub mod udp_gateway;
pub mod waveform;
pub mod wiring;
pub mod world;
