//! The PLL that derives weft's two clocks from the board's reference clock.
//!
//! weft's data plane runs at [`weft_regs::DATA_PLANE_CLOCK_HZ`] and its soft
//! core at [`weft_regs::SOFT_CORE_CLOCK_HZ`], an integer division of it. One
//! PLL makes both from one VCO, so their edges stay aligned and the crossing
//! between them inside `weft_chip` is synchronous. An integer-N PLL
//! (Intel's I/O PLL, Xilinx's MMCM used with integer counters) runs its VCO at
//! `f_ref × M / N` and divides it by one post-scale counter per output
//! (`M/(N × C)`: Stratix 10 Clocking and PLL User Guide 683195 §2.2.6; UG572
//! "MMCM" for the MMCM's M, D and O counters); this
//! module finds `N`, `M` and the two counters for a reference clock, keeping
//! every frequency inside the device's published ranges, or says why none
//! exist.

use std::fmt;

use crate::model::{Board, Vendor};

/// Which PLL the wrapper instantiates.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum PllKind {
    /// Intel's IOPLL Intel FPGA IP, generated as the variant `weft_pll`
    /// (ports `refclk`, `rst`, `outclk_0`, `outclk_1`, `locked`: Stratix 10
    /// Clocking and PLL User Guide 683195 §6.2, Agilex 7 683761 §5.5).
    Iopll,
    /// Xilinx's `MMCME4_ADV` primitive (UltraScale Architecture Libraries
    /// Guide UG974, "MMCME4_ADV"), instantiated directly.
    Mmcme4Adv,
}

impl PllKind {
    /// Whether the vendor's IP generator, not weft, picks `N`, `M` and the
    /// counters. Intel's IOPLL variant is set by its output frequencies, and
    /// Quartus chooses the counters and a VCO inside the device's range
    /// (Agilex 7 Clocking and PLL User Guide 683761 §2.2.7, "Clock
    /// Multiplication and Division"; the reference clock's range depends on
    /// the device, §5.4.1), so a build does not need weft's copy of the
    /// ranges. The MMCM is instantiated with weft's counters, so it does.
    pub fn vendor_chooses_setting(self) -> bool {
        match self {
            PllKind::Iopll => true,
            PllKind::Mmcme4Adv => false,
        }
    }
}

/// A closed frequency range in hertz.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct HzRange {
    /// Lowest frequency.
    pub min: u64,
    /// Highest frequency.
    pub max: u64,
}

impl HzRange {
    const fn mhz(min: u64, max: u64) -> Self {
        HzRange {
            min: min * 1_000_000,
            max: max * 1_000_000,
        }
    }

    fn contains(self, hz: u64) -> bool {
        (self.min..=self.max).contains(&hz)
    }
}

/// The published operating ranges of a PLL.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct PllLimits {
    /// Reference clock input.
    pub input: HzRange,
    /// Phase-frequency detector input (`f_ref / N`), where the cited
    /// document gives it; otherwise the vendor tool checks it.
    pub pfd: Option<HzRange>,
    /// VCO.
    pub vco: HzRange,
}

/// A family's PLL and, where a public document gives them, its ranges.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct PllDevice {
    /// The PLL the wrapper instantiates.
    pub kind: PllKind,
    /// Its ranges; `None` where no public document reachable has confirmed
    /// them for this family. That leaves a board unbuildable until they are
    /// only where weft sets the counters ([`PllKind::vendor_chooses_setting`]).
    pub limits: Option<PllLimits>,
    /// Where the ranges come from, or why they are open.
    pub source: &'static str,
}

impl PllDevice {
    /// Its ranges as an open fact, where no document has confirmed them.
    pub fn unconfirmed(&self) -> Option<String> {
        self.limits
            .is_none()
            .then(|| format!("PLL ranges: {}", self.source))
    }

    /// The open fact a build needs from this PLL: its ranges, where weft
    /// sets the counters from them and no document has confirmed them.
    pub fn unconfirmed_for_build(&self) -> Option<String> {
        self.unconfirmed()
            .filter(|_| !self.kind.vendor_chooses_setting())
    }
}

/// Stratix 10 I/O PLL, –1 speed grade (the kit's 1SD280PT2F55E1VG):
/// Stratix 10 Device Datasheet 683181, "I/O PLL Specifications": fIN
/// 10–1100 MHz, fINPFD 10–325 MHz, fVCO 600–1600 MHz.
const STRATIX10_IOPLL: PllLimits = PllLimits {
    input: HzRange::mhz(10, 1100),
    pfd: Some(HzRange::mhz(10, 325)),
    vco: HzRange::mhz(600, 1600),
};

/// Virtex UltraScale+ MMCM, –2 speed grade at VCCINT 0.85 V (the kit's
/// xcvu9p-flga2104-2L-e): DS923, "MMCM Switching Characteristics":
/// MMCM_FINMIN/FINMAX 10–933 MHz, MMCM_FVCOMIN/FVCOMAX 800–1600 MHz.
const VIRTEX_USP_MMCM: PllLimits = PllLimits {
    input: HzRange::mhz(10, 933),
    pfd: None,
    vco: HzRange::mhz(800, 1600),
};

/// The PLL of a device family, or `None` for a family weft has no PLL for.
pub fn device(vendor: Vendor, family: &str) -> Option<PllDevice> {
    match (vendor, family) {
        (Vendor::Intel, "Stratix 10") => Some(PllDevice {
            kind: PllKind::Iopll,
            limits: Some(STRATIX10_IOPLL),
            source: "Stratix 10 Device Datasheet (683181), I/O PLL Specifications, -1 speed grade",
        }),
        (Vendor::Intel, "Agilex 7") => Some(PllDevice {
            kind: PllKind::Iopll,
            limits: None,
            source: "Agilex 7 F-Series and I-Series Device Data Sheet (683301), I/O PLL \
                     Specifications: not yet confirmed from a reachable copy",
        }),
        (Vendor::Xilinx, "Virtex UltraScale+") => Some(PllDevice {
            kind: PllKind::Mmcme4Adv,
            limits: Some(VIRTEX_USP_MMCM),
            source: "Virtex UltraScale+ Data Sheet (DS923), MMCM Switching Characteristics, -2 speed grade",
        }),
        _ => None,
    }
}

/// The PLL of `board`'s family, if weft has one for it.
pub fn for_board(board: &Board) -> Option<PllDevice> {
    device(board.board.vendor, &board.board.family)
}

/// Search bound of the pre-divider `N`: a reference clock that needs more
/// than this to reach both outputs is refused.
const MAX_PRE_DIVIDE: u64 = 16;

/// Search bound of each post-scale counter.
const MAX_POST_DIVIDE: u64 = 128;

/// How one PLL makes weft's two clocks from its reference clock.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct PllPlan {
    /// Reference clock, in hertz.
    pub refclk_hz: u64,
    /// Pre-divider `N`.
    pub pre_divide: u64,
    /// Feedback multiplier `M`.
    pub multiply: u64,
    /// Post-scale counter of output 0, the data plane clock.
    pub data_plane_divide: u64,
    /// Post-scale counter of output 1, the soft core clock.
    pub soft_core_divide: u64,
}

impl PllPlan {
    /// The VCO frequency, in hertz.
    pub fn vco_hz(&self) -> u64 {
        self.refclk_hz * self.multiply / self.pre_divide
    }

    /// Output 0's frequency, in hertz.
    pub fn data_plane_hz(&self) -> u64 {
        self.vco_hz() / self.data_plane_divide
    }

    /// Output 1's frequency, in hertz.
    pub fn soft_core_hz(&self) -> u64 {
        self.vco_hz() / self.soft_core_divide
    }
}

/// Why no PLL setting makes weft's clocks from a reference clock.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Unreachable {
    /// The reference clock is outside the PLL's input range.
    Input {
        /// The reference clock, in hertz.
        refclk_hz: u64,
        /// The input range.
        range: HzRange,
    },
    /// No integer `N`, `M` and counters give exactly both clocks with the
    /// VCO (and the PFD, where known) in range.
    NoRatio {
        /// The reference clock, in hertz.
        refclk_hz: u64,
    },
}

impl fmt::Display for Unreachable {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let mhz = |hz: u64| hz as f64 / 1e6;
        match self {
            Unreachable::Input { refclk_hz, range } => write!(
                f,
                "{} MHz is outside the PLL's input range {}-{} MHz",
                mhz(*refclk_hz),
                mhz(range.min),
                mhz(range.max)
            ),
            Unreachable::NoRatio { refclk_hz } => write!(
                f,
                "no integer PLL setting makes exactly {} MHz and {} MHz from {} MHz with the VCO in range",
                mhz(u64::from(weft_regs::DATA_PLANE_CLOCK_HZ)),
                mhz(u64::from(weft_regs::SOFT_CORE_CLOCK_HZ)),
                mhz(*refclk_hz)
            ),
        }
    }
}

/// The setting that makes weft's data plane and soft core clocks from a
/// `refclk_hz` reference, with the VCO as fast as its range allows (the
/// lowest output jitter); within no known ranges, the slowest VCO.
pub fn plan(refclk_hz: u64, limits: Option<&PllLimits>) -> Result<PllPlan, Unreachable> {
    let data = u64::from(weft_regs::DATA_PLANE_CLOCK_HZ);
    let core = u64::from(weft_regs::SOFT_CORE_CLOCK_HZ);
    if let Some(l) = limits {
        if !l.input.contains(refclk_hz) {
            return Err(Unreachable::Input {
                refclk_hz,
                range: l.input,
            });
        }
    }
    let mut best: Option<PllPlan> = None;
    for pre_divide in 1..=MAX_PRE_DIVIDE {
        if !refclk_hz.is_multiple_of(pre_divide) {
            continue;
        }
        let pfd = refclk_hz / pre_divide;
        if limits.and_then(|l| l.pfd).is_some_and(|r| !r.contains(pfd)) {
            continue;
        }
        for data_plane_divide in 1..=MAX_POST_DIVIDE {
            let vco = data * data_plane_divide;
            if !vco.is_multiple_of(pfd) || !vco.is_multiple_of(core) {
                continue;
            }
            if limits.is_some_and(|l| !l.vco.contains(vco)) {
                continue;
            }
            let soft_core_divide = vco / core;
            if soft_core_divide > MAX_POST_DIVIDE {
                continue;
            }
            let candidate = PllPlan {
                refclk_hz,
                pre_divide,
                multiply: vco / pfd,
                data_plane_divide,
                soft_core_divide,
            };
            let better = match (&best, limits) {
                (None, _) => true,
                (Some(b), Some(_)) => candidate.vco_hz() > b.vco_hz(),
                (Some(b), None) => candidate.vco_hz() < b.vco_hz(),
            };
            if better {
                best = Some(candidate);
            }
        }
    }
    best.ok_or(Unreachable::NoRatio { refclk_hz })
}

/// A clock's frequency from the board file's megahertz, in hertz.
pub fn hz(mhz: f64) -> u64 {
    (mhz * 1e6).round() as u64
}
