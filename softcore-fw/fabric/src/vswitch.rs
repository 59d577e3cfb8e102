//! One virtual PCIe switch per host port: a virtual upstream port and N
//! virtual downstream ports, each a Type 1 function whose configuration
//! space the firmware holds (DESIGN.md, "Host domain").
//!
//! Every port has the PCI Express capability with its port type
//! (§7.5.3.2), MSI (§7.7.1) and Power Management (§7.5.2). Downstream ports
//! also have a hot-plug slot (Slot Capabilities/Control/Status, §7.5.3.9-11)
//! with Data Link Layer Link Active reporting, so the host's hot-plug driver
//! sees presence and link changes, and ACS (§7.7.11) with the features a
//! switch downstream port must offer, whose P2P Request Redirect the data
//! plane honours.
//!
//! The slot is one of the standard usage model (§6.7.1,
//! [`Slot::attention_button`]): the manager presses its Attention Button to
//! ask the host to release what is bound (managed hot-remove, §6.7.1.5),
//! and the host's driver powers the slot off with Power Controller Control
//! once it has (§6.7.1.8), which is when a graceful or managed unbind takes
//! effect ([`crate::binding`]). Every Slot Control write is a command that
//! completes at once: Command Completed latches (§6.7.3.2). The link of a
//! slot is up while a function is bound and the host keeps the slot's power
//! on; Power Controller Control resets to 0, on, so a host that never
//! touches it sees a bound function at once.
//!
//! Hot-plug interrupts follow §6.7.3.4: the port sends its MSI when the
//! hot-plug interrupt condition (Hot-Plug Interrupt Enable and an enabled,
//! latched event) goes from false to true.

use heapless::Vec;
use weft_pcie::config::acs::{feature, Acs, AcsCap};
use weft_pcie::config::function::BusNumbers;
use weft_pcie::config::msi::{Msi, MsiCap, MsiMessage};
use weft_pcie::config::pcie_cap::{
    link_capabilities, link_speed, slot_control, slot_status, Link, LinkState, PcieCap,
    PcieCapability, PortType, Slot,
};
use weft_pcie::config::pm::PowerManagement;
use weft_pcie::config::{
    CapabilityList, ConfigRegisters, ConfigSpace, FunctionIdentity, Type1Function,
};
use weft_pcie::Bdf;

use crate::binding::UnbindMode;
use crate::limits::MAX_SLOTS_PER_HOST;
use crate::operations::OperationId;
use crate::port_space::{compact, OutsideKeptRegisters, PortLayout, PortSpace};
use weft_regs::tables::{HostIndex, PortIndex};

/// The link the virtual ports report: 8 GT/s x16.
const VIRTUAL_LINK_SPEED: u8 = link_speed::GT_8;
/// Lanes of the virtual links.
const VIRTUAL_LINK_WIDTH: u8 = 16;

/// The capabilities every virtual port has, where they were laid out.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct PortCapabilities {
    /// The PCI Express capability.
    pub pcie: PcieCap,
    /// The MSI capability.
    pub msi: MsiCap,
    /// ACS (downstream ports only).
    pub acs: Option<AcsCap>,
}

/// A function bound behind a virtual downstream port, and what the host
/// wrote that the fabric keeps to itself.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct BoundFunction {
    /// The function's fabric ID.
    pub function: weft_pcie::Bdf,
    /// The host's BAR registers 0..=5 as it wrote them (shadow state: the
    /// function keeps its fabric addresses).
    pub shadow_bars: [u32; 6],
    /// The host's Command register as it wrote it.
    pub shadow_command: u16,
}

/// An unbind that waits for the host to power the slot off.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct PendingUnbind {
    /// The operation a client polls.
    pub op: OperationId,
    /// Graceful or managed: whether the manager pressed the slot's
    /// Attention Button.
    pub mode: UnbindMode,
}

/// What a Slot Control write (a hot-plug command, §6.7.3.2) changed.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct SlotCommand {
    /// The host turned the slot's power off (Power Controller Control 0 → 1).
    pub powered_off: bool,
    /// The MSI to send, if the hot-plug interrupt condition became true.
    pub msi: Option<MsiMessage>,
}

/// A virtual downstream port: a slot a function can be bound to.
#[derive(Clone, Debug)]
pub struct VirtualDownstreamPort {
    /// Its configuration registers (their write masks are the shared
    /// [`PortLayouts::downstream`]).
    pub space: PortSpace,
    /// Where its capabilities are.
    pub caps: PortCapabilities,
    /// What is bound behind it.
    pub bound: Option<BoundFunction>,
    /// The unbind of what is bound, while it waits for the host.
    pub unbinding: Option<PendingUnbind>,
    /// Whether the hot-plug interrupt condition held at the last check (§6.7.3.4).
    pub(crate) interrupt_pending: bool,
}

/// One host's virtual switch.
#[derive(Clone, Debug)]
pub struct VirtualSwitch {
    /// The switch ID of the switch its host port is on.
    pub switch_id: u64,
    /// The host port it is presented on.
    pub port: PortIndex,
    /// The host.
    pub host: HostIndex,
    /// The host's proxy fabric ID.
    pub proxy_id: Bdf,
    /// The virtual upstream port's configuration registers (their write
    /// masks are the shared [`PortLayouts::upstream`]).
    pub upstream: PortSpace,
    /// The bus number the upstream port captured from the host's Type 0
    /// configuration writes (§2.2.6.2); 0 until the first one.
    pub upstream_bus: u8,
    /// The virtual downstream ports, device numbers 0.. on the internal bus.
    pub downstream: Vec<VirtualDownstreamPort, MAX_SLOTS_PER_HOST>,
}

/// Why a virtual switch could not be built.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum VirtualSwitchError {
    /// More slots asked for than [`MAX_SLOTS_PER_HOST`].
    TooManySlots {
        /// Slots asked for.
        slots: u8,
        /// The capacity.
        capacity: usize,
    },
    /// A port's layout has registers beyond what
    /// [`crate::port_space`] keeps.
    Layout(OutsideKeptRegisters),
    /// A port's write masks differ from the shared layout of its kind.
    LayoutMismatch {
        /// The slot, or `None` for the upstream port.
        slot: Option<u8>,
    },
}

/// The write masks of the two kinds of virtual port, shared by every
/// virtual switch: each kind has the same capabilities at the same offsets.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct PortLayouts {
    /// Of every virtual upstream port.
    pub upstream: PortLayout,
    /// Of every virtual downstream port.
    pub downstream: PortLayout,
}

impl PortLayouts {
    /// Both kinds empty: before [`PortLayouts::new`] lays them out.
    pub const EMPTY: PortLayouts = PortLayouts {
        upstream: PortLayout::EMPTY,
        downstream: PortLayout::EMPTY,
    };

    /// Lays out one port of each kind and keeps its masks.
    pub fn new(
        upstream_identity: FunctionIdentity,
        downstream_identity: FunctionIdentity,
    ) -> Result<Self, VirtualSwitchError> {
        let (_, upstream, _) = build_port(upstream_identity, PortType::SwitchUpstream, None, 0)?;
        let (_, downstream, _) = build_port(
            downstream_identity,
            PortType::SwitchDownstream,
            Some(Slot::attention_button(1)),
            1,
        )?;
        Ok(PortLayouts {
            upstream,
            downstream,
        })
    }
}

/// Lays out one virtual port's header and capabilities.
///
/// The full space lives only for the duration of this call.
fn build_port(
    identity: FunctionIdentity,
    port_type: PortType,
    slot: Option<Slot>,
    port_number: u8,
) -> Result<(PortSpace, PortLayout, PortCapabilities), VirtualSwitchError> {
    // Laid out in place: a returned ConfigSpace (12 KiB) is copied on the
    // way out, and the soft core's stack is part of its 256 KiB data RAM.
    let mut space = ConfigSpace::new();
    Type1Function::switch_port(identity)
        .install(&mut space)
        .expect("a switch port header has no BARs to reject");
    let mut pcie = PcieCapability::new(port_type);
    pcie.link = Some(Link {
        capabilities: link_capabilities::DLL_LINK_ACTIVE_REPORTING,
        ..Link::trained(VIRTUAL_LINK_SPEED, VIRTUAL_LINK_WIDTH, port_number)
    });
    pcie.slot = slot;
    let mut list = CapabilityList::new(&mut space).expect("a freshly built header");
    let pcie_offset = list
        .push(&pcie)
        .expect("the first capability fits the PCI-compatible space");
    let msi_offset = list
        .push(&Msi {
            multiple_message_capable: 0,
            address_64: true,
            per_vector_masking: false,
        })
        .expect("MSI fits after the PCI Express capability");
    list.push(&PowerManagement::minimal())
        .expect("PM fits after MSI");
    let acs = if port_type == PortType::SwitchDownstream {
        let offset = list
            .push_extended(&Acs {
                features: feature::DOWNSTREAM_PORT_REQUIRED,
                egress_vector_bits: 0,
            })
            .expect("the first extended capability fits");
        Some(AcsCap::at(offset))
    } else {
        None
    };
    let caps = PortCapabilities {
        pcie: PcieCap::at(pcie_offset),
        msi: MsiCap::at(msi_offset),
        acs,
    };
    let (values, layout) = compact(&space).map_err(VirtualSwitchError::Layout)?;
    Ok((values, layout, caps))
}

impl VirtualSwitch {
    /// A virtual switch for `host` on `port` of switch `switch_id` with
    /// `slots` empty downstream ports, whose write masks must be `layouts`'.
    #[allow(clippy::too_many_arguments)]
    pub fn new(
        switch_id: u64,
        port: PortIndex,
        host: HostIndex,
        slots: u8,
        upstream_identity: FunctionIdentity,
        downstream_identity: FunctionIdentity,
        layouts: &PortLayouts,
    ) -> Result<Self, VirtualSwitchError> {
        if usize::from(slots) > MAX_SLOTS_PER_HOST {
            return Err(VirtualSwitchError::TooManySlots {
                slots,
                capacity: MAX_SLOTS_PER_HOST,
            });
        }
        let (upstream, layout, _) =
            build_port(upstream_identity, PortType::SwitchUpstream, None, 0)?;
        if layout != layouts.upstream {
            return Err(VirtualSwitchError::LayoutMismatch { slot: None });
        }
        let mut downstream = Vec::new();
        for slot in 0..slots {
            // Physical Slot Numbers are unique in the chassis and non-zero
            // for a hot-plug slot; the host index keeps them apart between hosts.
            let physical = ((host.0 & 0xff) << 5) | (u16::from(slot) + 1);
            let (mut space, layout, caps) = build_port(
                downstream_identity,
                PortType::SwitchDownstream,
                Some(Slot::attention_button(physical)),
                slot + 1,
            )?;
            if layout != layouts.downstream {
                return Err(VirtualSwitchError::LayoutMismatch { slot: Some(slot) });
            }
            caps.pcie.set_link_state(&mut space, link_down());
            let _ = downstream.push(VirtualDownstreamPort {
                space,
                caps,
                bound: None,
                unbinding: None,
                interrupt_pending: false,
            });
        }
        Ok(VirtualSwitch {
            switch_id,
            port,
            host,
            proxy_id: Bdf::default(),
            upstream,
            upstream_bus: 0,
            downstream,
        })
    }

    /// The host-domain ID of downstream port `slot`: device `slot` on the
    /// upstream port's secondary bus.
    pub fn downstream_id(&self, slot: u8) -> Bdf {
        let bus = BusNumbers::read(&self.upstream).secondary;
        Bdf::new(bus, slot, 0)
    }

    /// The host-domain ID of the upstream port.
    pub fn upstream_id(&self) -> Bdf {
        Bdf::new(self.upstream_bus, 0, 0)
    }
}

/// Link Status of a slot with nothing in it.
const fn link_down() -> LinkState {
    LinkState {
        speed: VIRTUAL_LINK_SPEED,
        width: 0,
        dll_link_active: false,
        training: false,
    }
}

/// Link Status of a slot with a bound function.
const fn link_up() -> LinkState {
    LinkState {
        speed: VIRTUAL_LINK_SPEED,
        width: VIRTUAL_LINK_WIDTH,
        dll_link_active: true,
        training: false,
    }
}

impl VirtualDownstreamPort {
    /// An adapter appears in or leaves the slot: Presence Detect State
    /// follows `present` and Presence Detect Changed latches (§6.7.3.3);
    /// the link is up while the adapter is present and the slot powered,
    /// and Data Link Layer State Changed latches when that changes
    /// (§7.5.3.11). Returns the MSI to send if the hot-plug interrupt
    /// condition became true.
    pub fn set_presence(&mut self, present: bool) -> Option<MsiMessage> {
        let pcie = self.caps.pcie;
        let state = if present {
            slot_status::PRESENCE_DETECT_STATE
        } else {
            0
        };
        pcie.set_slot_state(&mut self.space, state);
        pcie.raise_slot_events(&mut self.space, slot_status::PRESENCE_DETECT_CHANGED);
        self.update_link();
        self.check_interrupt()
    }

    /// The link below the slot went down and came up again (its device was
    /// hot reset, [`crate::link_control`]): Data Link Layer State Changed
    /// latches while Data Link Layer Link Active reads set again
    /// (§7.5.3.11), as a downstream port whose link partner was reset
    /// shows it. Returns the MSI to send if the hot-plug interrupt
    /// condition became true.
    pub fn link_bounced(&mut self) -> Option<MsiMessage> {
        self.caps
            .pcie
            .raise_slot_events(&mut self.space, slot_status::DLL_STATE_CHANGED);
        self.check_interrupt()
    }

    /// Whether the slot is powered: Power Controller Control is 0 (§7.5.3.10).
    pub fn powered(&self) -> bool {
        self.caps.pcie.slot_control(&self.space) & slot_control::POWER_CONTROLLER_OFF == 0
    }

    /// Whether an adapter is present: Presence Detect State (§7.5.3.11).
    pub fn present(&self) -> bool {
        self.caps.pcie.slot_status(&self.space) & slot_status::PRESENCE_DETECT_STATE != 0
    }

    /// The manager presses the slot's Attention Button (§6.7.1.5):
    /// Attention Button Pressed latches. Returns the MSI to send if the
    /// hot-plug interrupt condition became true.
    pub fn press_attention_button(&mut self) -> Option<MsiMessage> {
        self.caps
            .pcie
            .raise_slot_events(&mut self.space, slot_status::ATTENTION_BUTTON_PRESSED);
        self.check_interrupt()
    }

    /// Takes back a press whose interrupt could not be sent: Attention
    /// Button Pressed clears, and the interrupt condition is evaluated
    /// again without a message, so the slot is as before the press.
    pub fn withdraw_attention_button(&mut self) {
        let status = self.caps.pcie.offset + weft_pcie::config::pcie_cap::SLOT_STATUS;
        let value =
            ConfigRegisters::read_u16(&self.space, status) & !slot_status::ATTENTION_BUTTON_PRESSED;
        ConfigRegisters::set_u16(&mut self.space, status, value);
        self.interrupt_pending = self.caps.pcie.hot_plug_interrupt_pending(&self.space);
    }

    /// Carries out the command of a software write to Slot Control that
    /// found it at `before` (§6.7.3.2): the slot's power follows Power
    /// Controller Control, the link with it, and Command Completed latches
    /// once it is done, at once here; indicators are what software wrote.
    pub fn slot_command(&mut self, before: u16) -> SlotCommand {
        let off = slot_control::POWER_CONTROLLER_OFF;
        let after = self.caps.pcie.slot_control(&self.space);
        let powered_off = before & off == 0 && after & off != 0;
        self.update_link();
        self.caps
            .pcie
            .raise_slot_events(&mut self.space, slot_status::COMMAND_COMPLETED);
        SlotCommand {
            powered_off,
            msi: self.check_interrupt(),
        }
    }

    /// Brings the link up or down as presence and power say, latching Data
    /// Link Layer State Changed when Data Link Layer Link Active changes.
    fn update_link(&mut self) {
        let pcie = self.caps.pcie;
        let up = self.present() && self.powered();
        if pcie.link_state(&self.space).dll_link_active == up {
            return;
        }
        pcie.set_link_state(&mut self.space, if up { link_up() } else { link_down() });
        pcie.raise_slot_events(&mut self.space, slot_status::DLL_STATE_CHANGED);
    }

    /// Re-evaluates the hot-plug interrupt condition after the slot's
    /// registers changed; the MSI to send when it went from false to true
    /// and MSI is enabled (§6.7.3.4, §7.7.1).
    pub fn check_interrupt(&mut self) -> Option<MsiMessage> {
        let pending = self.caps.pcie.hot_plug_interrupt_pending(&self.space);
        let rising = pending && !self.interrupt_pending;
        self.interrupt_pending = pending;
        if !rising {
            return None;
        }
        self.caps.msi.message(&self.space, 0)
    }

    /// Whether the host set ACS P2P Request Redirect on this port (§7.7.11.3).
    pub fn p2p_request_redirect(&self) -> bool {
        self.caps
            .acs
            .is_some_and(|acs| acs.p2p_request_redirect(&self.space))
    }

    /// The secondary bus the host gave this port; 0 before it did.
    pub fn secondary_bus(&self) -> u8 {
        BusNumbers::read(&self.space).secondary
    }
}
