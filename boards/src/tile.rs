//! The TLP interfaces of Intel's PCIe tile hard IPs, as tables of port names.
//!
//! P-tile, F-tile and R-tile in TLP Bypass hand TLPs to user logic on an
//! Avalon-ST bus split into segments, with each TLP's header on a header bus
//! beside the data. What each port carries ([`Sig`]) is the same for every
//! tile; only the spelling differs: the P-tile packs each per-segment signal
//! into one vector (`p0_rx_st_sop_o[1:0]`), the R-tile gives every segment
//! ports of its own (`p0_rx_st0_sop_o`, `p0_rx_st1_sop_o`, ...) and splits
//! `valid` into header-valid and data-valid. A tile is one [`Table`]; the
//! wrapper, the black-box stubs and the simulation models are all generated
//! from it, so adding a tile is adding a table.
//!
//! A tile bifurcated 2x8 or 4x4 is one IP instance serving several weft
//! ports, one per core: the names carry the core as `{p}` (`p0_`, `p1_`...).

use crate::model::{HardIp, HardIpKind};

/// What one port of a tile's interface carries, whatever the tile calls it.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Sig {
    /// PCIe reference clock 0.
    Refclk0,
    /// PCIe reference clock 1.
    Refclk1,
    /// PERST# from the connector.
    PinPerstN,
    /// Low once the FPGA has entered user mode (tied low here).
    NinitDone,
    /// The application clock the TLP interface runs on.
    Coreclk,
    /// Low while the IP's user-side logic is in reset.
    ResetStatusN,
    /// The link is up (LTSSM in L0).
    LinkUp,
    /// User logic can take RX beats (with the RX ready latency).
    RxReady,
    /// Per segment: a TLP starts here.
    RxSop,
    /// Per segment: a TLP ends here.
    RxEop,
    /// Per segment: the segment carries part of a TLP (P-tile).
    RxValid,
    /// Per segment: the segment carries payload (R-tile).
    RxDvalid,
    /// Per segment: the segment carries a header (R-tile).
    RxHvalid,
    /// Per segment: the segment's data, first DW least significant.
    RxData,
    /// Per segment: empty DWs of the segment holding the end of a TLP.
    RxEmpty,
    /// Per segment: the header of the TLP starting there, DW0 most significant.
    RxHdr,
    /// The IP can take TX beats (with the TX ready latency).
    TxReady,
    /// Per segment: a TLP starts here.
    TxSop,
    /// Per segment: a TLP ends here.
    TxEop,
    /// Per segment: the segment carries part of a TLP (P-tile).
    TxValid,
    /// Per segment: the segment carries payload (R-tile).
    TxDvalid,
    /// Per segment: the segment carries a header (R-tile).
    TxHvalid,
    /// Per segment: poison the TLP (tied low).
    TxErr,
    /// Per segment: the segment's data, first DW least significant.
    TxData,
    /// Per segment: the header of the TLP starting there, DW0 most significant.
    TxHdr,
    /// The Hard IP reconfiguration interface's clock (683059 §4.12: 50 to
    /// 125 MHz), an Avalon-MM slave onto the tile's configuration space.
    ReconfigClk,
    /// Its reset, active low.
    ReconfigRstN,
    /// Its byte address, 21 bits (P-tile, F-tile).
    ReconfigAddress,
    /// Its byte address, 32 bits (R-tile, 683501 §4.3.4).
    ReconfigAddressWide,
    /// Its read request.
    ReconfigRead,
    /// Its write request.
    ReconfigWrite,
    /// The byte written.
    ReconfigWriteData,
    /// The byte read.
    ReconfigReadData,
    /// The byte read is valid.
    ReconfigReadDataValid,
    /// The interface has not yet taken the request.
    ReconfigWaitRequest,
    /// TX flow control: a credit limit, one counter a cycle (P-tile, F-tile;
    /// 683059 §4.4.7).
    TxCdtsLimit,
    /// Which counter `TxCdtsLimit` carries this cycle.
    TxCdtsLimitTdmIdx,
    /// TX flow control, R-tile (683501 §4.3.1.2.5): header credit
    /// initialization under way, per class.
    TxHcrdtInit,
    /// User logic is ready for header credit initialization.
    TxHcrdtInitAck,
    /// Header credits released, per class.
    TxHcrdtUpdate,
    /// How many, two bits per class.
    TxHcrdtUpdateCnt,
    /// Data credit initialization under way, per class.
    TxDcrdtInit,
    /// User logic is ready for data credit initialization.
    TxDcrdtInitAck,
    /// Data credits released, per class.
    TxDcrdtUpdate,
    /// How many, four bits per class.
    TxDcrdtUpdateCnt,
    /// Per lane: receiver, positive.
    LaneRxP,
    /// Per lane: receiver, negative.
    LaneRxN,
    /// Per lane: transmitter, positive.
    LaneTxP,
    /// Per lane: transmitter, negative.
    LaneTxN,
}

/// How many ports one signal stands for.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Scope {
    /// One port.
    Once,
    /// One value per segment of the bus.
    Segment,
    /// One port per lane (`{i}` in the name is the lane).
    Lane,
}

impl Sig {
    /// The signal's name in generated Verilog: `<port>_hip_<label>`.
    pub const fn label(self) -> &'static str {
        use Sig::*;
        match self {
            Refclk0 => "refclk0",
            Refclk1 => "refclk1",
            PinPerstN => "pin_perst_n",
            NinitDone => "ninit_done",
            Coreclk => "coreclk",
            ResetStatusN => "reset_status_n",
            LinkUp => "link_up",
            RxReady => "rx_ready",
            RxSop => "rx_sop",
            RxEop => "rx_eop",
            RxValid => "rx_valid",
            RxDvalid => "rx_dvalid",
            RxHvalid => "rx_hvalid",
            RxData => "rx_data",
            RxEmpty => "rx_empty",
            RxHdr => "rx_hdr",
            TxReady => "tx_ready",
            TxSop => "tx_sop",
            TxEop => "tx_eop",
            TxValid => "tx_valid",
            TxDvalid => "tx_dvalid",
            TxHvalid => "tx_hvalid",
            TxErr => "tx_err",
            TxData => "tx_data",
            TxHdr => "tx_hdr",
            ReconfigClk => "reconfig_clk",
            ReconfigRstN => "reconfig_rst_n",
            ReconfigAddress => "reconfig_address",
            ReconfigAddressWide => "reconfig_address_wide",
            ReconfigRead => "reconfig_read",
            ReconfigWrite => "reconfig_write",
            ReconfigWriteData => "reconfig_writedata",
            ReconfigReadData => "reconfig_readdata",
            ReconfigReadDataValid => "reconfig_readdatavalid",
            ReconfigWaitRequest => "reconfig_waitrequest",
            TxCdtsLimit => "tx_cdts_limit",
            TxCdtsLimitTdmIdx => "tx_cdts_limit_tdm_idx",
            TxHcrdtInit => "tx_hcrdt_init",
            TxHcrdtInitAck => "tx_hcrdt_init_ack",
            TxHcrdtUpdate => "tx_hcrdt_update",
            TxHcrdtUpdateCnt => "tx_hcrdt_update_cnt",
            TxDcrdtInit => "tx_dcrdt_init",
            TxDcrdtInitAck => "tx_dcrdt_init_ack",
            TxDcrdtUpdate => "tx_dcrdt_update",
            TxDcrdtUpdateCnt => "tx_dcrdt_update_cnt",
            LaneRxP => "rx_p",
            LaneRxN => "rx_n",
            LaneTxP => "tx_p",
            LaneTxN => "tx_n",
        }
    }

    /// Whether the IP drives this signal.
    pub const fn from_ip(self) -> bool {
        use Sig::*;
        matches!(
            self,
            Coreclk
                | ResetStatusN
                | LinkUp
                | RxSop
                | RxEop
                | RxValid
                | RxDvalid
                | RxHvalid
                | RxData
                | RxEmpty
                | RxHdr
                | TxReady
                | ReconfigReadData
                | ReconfigReadDataValid
                | ReconfigWaitRequest
                | TxCdtsLimit
                | TxCdtsLimitTdmIdx
                | TxHcrdtInit
                | TxHcrdtUpdate
                | TxHcrdtUpdateCnt
                | TxDcrdtInit
                | TxDcrdtUpdate
                | TxDcrdtUpdateCnt
                | LaneTxP
                | LaneTxN
        )
    }

    /// Whether the signal belongs to the Hard IP reconfiguration interface,
    /// which the wrapper drives from a port's link controller rather than
    /// from its TLP shims.
    pub const fn is_reconfig(self) -> bool {
        use Sig::*;
        matches!(
            self,
            ReconfigClk
                | ReconfigRstN
                | ReconfigAddress
                | ReconfigAddressWide
                | ReconfigRead
                | ReconfigWrite
                | ReconfigWriteData
                | ReconfigReadData
                | ReconfigReadDataValid
                | ReconfigWaitRequest
        )
    }

    /// How many ports the signal stands for.
    pub const fn scope(self) -> Scope {
        use Sig::*;
        match self {
            RxSop | RxEop | RxValid | RxDvalid | RxHvalid | RxData | RxEmpty | RxHdr | TxSop
            | TxEop | TxValid | TxDvalid | TxHvalid | TxErr | TxData | TxHdr => Scope::Segment,
            LaneRxP | LaneRxN | LaneTxP | LaneTxN => Scope::Lane,
            _ => Scope::Once,
        }
    }

    /// Bits of the whole signal of `ip`: all segments, or all lanes.
    pub fn total_bits(self, ip: &HardIp) -> u32 {
        let segments = u32::from(ip.segments);
        match self.scope() {
            Scope::Once => self.bits(0),
            Scope::Segment => self.bits(ip.data_bits / segments) * segments,
            Scope::Lane => u32::from(ip.lanes),
        }
    }

    /// Bits of one instance: one segment's worth for per-segment signals.
    pub const fn bits(self, segment_data_bits: u32) -> u32 {
        match self {
            Sig::RxData | Sig::TxData => segment_data_bits,
            Sig::RxEmpty => EMPTY_BITS,
            Sig::RxHdr | Sig::TxHdr => HEADER_BITS,
            Sig::ReconfigAddress => 21,
            Sig::ReconfigAddressWide => 32,
            Sig::ReconfigWriteData | Sig::ReconfigReadData => 8,
            Sig::TxCdtsLimit => 16,
            Sig::TxCdtsLimitTdmIdx
            | Sig::TxHcrdtInit
            | Sig::TxHcrdtInitAck
            | Sig::TxHcrdtUpdate
            | Sig::TxDcrdtInit
            | Sig::TxDcrdtInitAck
            | Sig::TxDcrdtUpdate => 3,
            Sig::TxHcrdtUpdateCnt => 6,
            Sig::TxDcrdtUpdateCnt => 12,
            _ => 1,
        }
    }
}

/// Bits of a segment's empty-DW count: a 256-bit segment holds 8 DWs.
pub const EMPTY_BITS: u32 = 3;

/// Bits of a segment's header bus: a 4 DW header.
pub const HEADER_BITS: u32 = 128;

/// How a tile spells per-segment signals.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Segments {
    /// One vector per signal, segment 0 in the least significant bits.
    Packed,
    /// One port per segment; `{i}` in the name is the segment.
    PerPort,
}

/// One tile's TLP interface: its port names and how it times `ready`.
#[derive(Clone, Copy, Debug)]
pub struct Table {
    /// The document the names come from.
    pub source: &'static str,
    /// How per-segment signals are spelled.
    pub segments: Segments,
    /// Cycles the IP may still send RX beats after user logic drops `ready`.
    pub rx_ready_latency: u32,
    /// Cycles after the IP raises (drops) `ready` that user logic may (must
    /// no longer) send a TX beat: a beat goes in cycle t only if `ready` was
    /// high in cycle t - latency.
    pub tx_ready_latency: u32,
    /// Every port the wrapper connects, by what it carries.
    pub ports: &'static [(Sig, &'static str)],
    /// Byte address, on the Hard IP reconfiguration interface, of the low
    /// byte of the tile's Bridge Control register (Secondary Bus Reset,
    /// bit 6; PCIe Base 6.0 §7.5.1.3.13): offset 0x3E of a Type 1 header.
    pub bridge_control: u32,
    /// Byte address of the low byte of its Link Control register (Retrain
    /// Link, bit 5; §7.5.3.7): 0x10 past its PCI Express Capability.
    pub link_control: u32,
}

/// The clock, reset and lane ports every tile spells alike. `{p}` is the
/// core: a tile bifurcated 2x8 or 4x4 is one IP whose cores' ports are
/// `p0_`…`p3_` (683059 and 683501, "Overview" of the interfaces); ports
/// without it (clocks, PERST#, lanes) are the tile's.
macro_rules! tile_ports {
    ($($sig:ident => $name:literal),* $(,)?) => {
        &[
            (Sig::Refclk0, "refclk0"),
            (Sig::Refclk1, "refclk1"),
            (Sig::PinPerstN, "pin_perst_n"),
            (Sig::NinitDone, "ninit_done"),
            (Sig::Coreclk, "coreclkout_hip"),
            (Sig::ResetStatusN, "p{p}_reset_status_n"),
            (Sig::LinkUp, "p{p}_link_up_o"),
            (Sig::RxReady, "p{p}_rx_st_ready_i"),
            (Sig::TxReady, "p{p}_tx_st_ready_o"),
            $((Sig::$sig, $name),)*
            (Sig::LaneRxP, "rx_p_in{i}"),
            (Sig::LaneRxN, "rx_n_in{i}"),
            (Sig::LaneTxP, "tx_p_out{i}"),
            (Sig::LaneTxN, "tx_n_out{i}"),
        ]
    };
}

/// P-tile, as in 683059 "Avalon Streaming Interface" (F-tile's 683140 uses
/// the same names). RX ready latency 27 (683059 "rx_st_ready Behavior"); TX
/// ready latency 3. The Hard IP reconfiguration interface is the tile's,
/// one for its cores (683059 §4.12; the names with their `_i`/`_o` as the
/// P-tile's Avalon-MM guide 683268 Table 55 spells them). TX flow control
/// reports the partner's credit limits, one counter a cycle (683059
/// §4.4.7, `tx_cdts_limit_o[15:0]`, `tx_cdts_limit_tdm_idx_o[2:0]`).
pub const PTILE: Table = Table {
    source: "683059 P-Tile Avalon Streaming IP for PCIe, Interfaces",
    segments: Segments::Packed,
    rx_ready_latency: 27,
    tx_ready_latency: 3,
    ports: tile_ports![
        RxSop => "p{p}_rx_st_sop_o",
        RxEop => "p{p}_rx_st_eop_o",
        RxValid => "p{p}_rx_st_valid_o",
        RxData => "p{p}_rx_st_data_o",
        RxEmpty => "p{p}_rx_st_empty_o",
        RxHdr => "p{p}_rx_st_hdr_o",
        TxSop => "p{p}_tx_st_sop_i",
        TxEop => "p{p}_tx_st_eop_i",
        TxValid => "p{p}_tx_st_valid_i",
        TxErr => "p{p}_tx_st_err_i",
        TxData => "p{p}_tx_st_data_i",
        TxHdr => "p{p}_tx_st_hdr_i",
        TxCdtsLimit => "p{p}_tx_cdts_limit_o",
        TxCdtsLimitTdmIdx => "p{p}_tx_cdts_limit_tdm_idx_o",
        ReconfigClk => "hip_reconfig_clk",
        ReconfigRstN => "hip_reconfig_rst_n",
        ReconfigAddress => "hip_reconfig_address_i",
        ReconfigRead => "hip_reconfig_read_i",
        ReconfigWrite => "hip_reconfig_write_i",
        ReconfigWriteData => "hip_reconfig_writedata_i",
        ReconfigReadData => "hip_reconfig_readdata_o",
        ReconfigReadDataValid => "hip_reconfig_readdatavalid_o",
        ReconfigWaitRequest => "hip_reconfig_waitrequest_o",
    ],
    // PF0's registers start at 0 (683059 A.1, "Configuration Space
    // Offsets"); the PCI Express Capability at 0x70 is still to check
    // against A.1, "PCIe Configuration Space Registers".
    bridge_control: 0x3e,
    link_control: 0x80,
};

/// R-tile, as in 683501 "Avalon Streaming Interface": one set of ports per
/// segment, header-valid and data-valid apart. RX ready latency taken as the
/// P-tile's 27; TX ready latency 3, the figure of 683501 "tx_st_ready_o
/// Behavior" (which allows up to 16). TX flow control releases credits
/// after an initialization handshake (683501 §4.3.1.2.5: `hcrdt_*` with
/// two bits of count per class; the `dcrdt_*` count taken as four bits per
/// class). Each core has its own Hard IP
/// reconfiguration interface, with a 32-bit address (683501 §4.3.4 and
/// appendix A, `pX_hip_reconfig_address_i[31:0]`).
pub const RTILE: Table = Table {
    source: "683501 R-Tile Avalon Streaming IP for PCIe, Interfaces",
    segments: Segments::PerPort,
    rx_ready_latency: 27,
    tx_ready_latency: 3,
    ports: tile_ports![
        RxSop => "p{p}_rx_st{i}_sop_o",
        RxEop => "p{p}_rx_st{i}_eop_o",
        RxDvalid => "p{p}_rx_st{i}_dvalid_o",
        RxHvalid => "p{p}_rx_st{i}_hvalid_o",
        RxData => "p{p}_rx_st{i}_data_o",
        RxEmpty => "p{p}_rx_st{i}_empty_o",
        RxHdr => "p{p}_rx_st{i}_hdr_o",
        TxSop => "p{p}_tx_st{i}_sop_i",
        TxEop => "p{p}_tx_st{i}_eop_i",
        TxDvalid => "p{p}_tx_st{i}_dvalid_i",
        TxHvalid => "p{p}_tx_st{i}_hvalid_i",
        TxData => "p{p}_tx_st{i}_data_i",
        TxHdr => "p{p}_tx_st{i}_hdr_i",
        TxHcrdtInit => "p{p}_tx_st_hcrdt_init_o",
        TxHcrdtInitAck => "p{p}_tx_st_hcrdt_init_ack_i",
        TxHcrdtUpdate => "p{p}_tx_st_hcrdt_update_o",
        TxHcrdtUpdateCnt => "p{p}_tx_st_hcrdt_update_cnt_o",
        TxDcrdtInit => "p{p}_tx_st_dcrdt_init_o",
        TxDcrdtInitAck => "p{p}_tx_st_dcrdt_init_ack_i",
        TxDcrdtUpdate => "p{p}_tx_st_dcrdt_update_o",
        TxDcrdtUpdateCnt => "p{p}_tx_st_dcrdt_update_cnt_o",
        ReconfigClk => "p{p}_hip_reconfig_clk",
        ReconfigRstN => "p{p}_hip_reconfig_rst_n",
        ReconfigAddressWide => "p{p}_hip_reconfig_address_i",
        ReconfigRead => "p{p}_hip_reconfig_read_i",
        ReconfigWrite => "p{p}_hip_reconfig_write_i",
        ReconfigWriteData => "p{p}_hip_reconfig_writedata_i",
        ReconfigReadData => "p{p}_hip_reconfig_readdata_o",
        ReconfigReadDataValid => "p{p}_hip_reconfig_readdatavalid_o",
        ReconfigWaitRequest => "p{p}_hip_reconfig_waitrequest_o",
    ],
    // Taken as the P-tile's: the R-tile's own register maps (683501
    // appendix A, "Configuration Register Maps") are still to read.
    bridge_control: 0x3e,
    link_control: 0x80,
};

/// The table of a tile kind; `None` for blocks without a tile interface.
pub const fn table(kind: HardIpKind) -> Option<&'static Table> {
    match kind {
        HardIpKind::PTile | HardIpKind::FTile => Some(&PTILE),
        HardIpKind::RTile => Some(&RTILE),
        HardIpKind::Pcie4 | HardIpKind::Pcie4c => None,
    }
}

/// One concrete port of an IP variant, with the slice of the signal it carries.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Expanded {
    /// What it carries.
    pub sig: Sig,
    /// The port's name.
    pub name: String,
    /// The port's width.
    pub bits: u32,
    /// The signal's whole width across segments or lanes.
    pub total_bits: u32,
    /// The least significant bit of the signal this port carries.
    pub lsb: u32,
    /// Which of the instance's weft ports (the tile's cores, in order) the
    /// port belongs to; `None` for the tile's clocks and PERST#.
    pub core: Option<usize>,
}

impl Expanded {
    /// The part of a `total_bits`-wide `signal` this port carries.
    pub fn slice_of(&self, signal: &str) -> String {
        if self.bits == self.total_bits {
            signal.to_owned()
        } else if self.bits == 1 {
            format!("{signal}[{}]", self.lsb)
        } else {
            format!("{signal}[{}:{}]", self.lsb + self.bits - 1, self.lsb)
        }
    }
}

impl Table {
    /// Whether the tile has a port carrying `sig`.
    pub fn has(&self, sig: Sig) -> bool {
        self.ports.iter().any(|(s, _)| *s == sig)
    }

    /// The concrete ports of the IP instance serving `cores` (one weft port
    /// per core of the tile, in core order), in table order.
    pub fn expand(&self, cores: &[&HardIp]) -> Vec<Expanded> {
        let mut out = Vec::new();
        for &(sig, name) in self.ports {
            if sig.scope() == Scope::Lane {
                // The tile's lanes, in order: each core's lanes follow the previous core's.
                let mut lane = 0;
                for (core, ip) in cores.iter().enumerate() {
                    for local in 0..u32::from(ip.lanes) {
                        out.push(Expanded {
                            sig,
                            name: name.replace("{i}", &lane.to_string()),
                            bits: 1,
                            total_bits: u32::from(ip.lanes),
                            lsb: local,
                            core: Some(core),
                        });
                        lane += 1;
                    }
                }
            } else if name.contains("{p}") {
                for (core, ip) in cores.iter().enumerate() {
                    let name = name.replace("{p}", &core.to_string());
                    out.extend(self.expand_core(sig, &name, ip, core));
                }
            } else {
                out.push(Expanded {
                    sig,
                    name: name.to_owned(),
                    bits: sig.bits(0),
                    total_bits: sig.bits(0),
                    lsb: 0,
                    core: None,
                });
            }
        }
        out
    }

    /// The ports of one core's signal.
    fn expand_core(&self, sig: Sig, name: &str, ip: &HardIp, core: usize) -> Vec<Expanded> {
        let segments = u32::from(ip.segments);
        let bits = sig.bits(ip.data_bits / segments);
        let count = match (sig.scope(), self.segments) {
            (Scope::Segment, Segments::PerPort) => segments,
            (Scope::Segment, Segments::Packed) => {
                return vec![Expanded {
                    sig,
                    name: name.to_owned(),
                    bits: bits * segments,
                    total_bits: bits * segments,
                    lsb: 0,
                    core: Some(core),
                }];
            }
            (Scope::Once | Scope::Lane, _) => 1,
        };
        (0..count)
            .map(|i| Expanded {
                sig,
                name: name.replace("{i}", &i.to_string()),
                bits,
                total_bits: bits * count,
                lsb: bits * i,
                core: Some(core),
            })
            .collect()
    }
}
