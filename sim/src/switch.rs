//! One weft switch as the simulator wires it: weft-model's data plane
//! behind its CSR window, plus the management function every port
//! presents on its link.
//!
//! The data plane ([`Switch`]) forwards TLPs by the tables the fabric
//! manager writes, through its CSR window as the soft core writes them
//! (weft-model's [`CsrWindow`], [`WeftSwitch::csr_window`]): the same
//! registers a diagnostic CSR access reads. Beside it, each port of a weft switch answers Type 0
//! configuration requests that arrive on its link with a small management
//! function carrying weft's identity VSEC (`weft_pcie::config::vsec`): the
//! switch ID, its port count, the port's index and role. That is how the
//! fabric manager, probing a link, tells a neighbouring weft switch from
//! an endpoint. The function's one BAR, over the switch's CSR window, is
//! the data plane's management BAR register
//! ([`CsrWindow::management_config`]); memory requests hitting it arrive
//! through [`WeftSwitch::forward`] and are executed against the window,
//! which is how a fabric manager on another switch writes this one's
//! tables in-band.

use std::time::Duration;

use weft_devices::packet::{completion_for, RequestInfo};
use weft_model::csr_window::CsrWindow;
use weft_model::{Delivery, Forwarding, IngressError, Packet, PortIndex, Switch};
use weft_pcie::config::vsec::{management_function, PortRole as VsecRole, WeftIdentity};
use weft_pcie::config::ConfigSpace;
use weft_pcie::tlp::{Body, CompletionStatus, ConfigType, Direction};

use crate::rtl_plane::{RtlError, RtlPlane, RtlSimulator, RtlSummary};

/// Port-to-port latency of a switch beyond its links: about the middle of
/// the published range for commercial Gen4 switches (85–140 ns including
/// PHY, shared/REFERENCE.md); the RTL measures 2 cycles of core latency.
pub const SWITCH_LATENCY: Duration = Duration::from_nanos(110);

/// A weft switch: its ID, its data plane and its ports' management functions.
pub struct WeftSwitch {
    id: u64,
    /// The data plane behind its CSR window.
    window: CsrWindow,
    vendor_id: u16,
    /// Per port, its management function's configuration space; `None` if
    /// it could not be laid out (the port then answers Unsupported Request).
    functions: Vec<Option<ConfigSpace>>,
    /// The RTL that carries its TLPs, when it has one ([`WeftSwitch::use_rtl`]).
    rtl: Option<RtlPlane>,
}

impl WeftSwitch {
    /// A switch with ID `id` and `ports` disabled ports, whose management
    /// functions report `vendor_id`; every port's role starts as
    /// [`VsecRole::Endpoint`].
    pub fn new(id: u64, ports: usize, vendor_id: u16) -> Self {
        let mut switch = WeftSwitch {
            id,
            window: CsrWindow::new(Switch::new(ports)),
            vendor_id,
            functions: Vec::new(),
            rtl: None,
        };
        switch.functions = (0..ports)
            .map(|port| switch.function_for(port as u8, VsecRole::Endpoint))
            .collect();
        switch
    }

    fn function_for(&self, port: u8, role: VsecRole) -> Option<ConfigSpace> {
        let identity = WeftIdentity {
            switch_id: self.id,
            port_count: u8::try_from(self.window.switch().ports()).unwrap_or(u8::MAX),
            port_index: port,
            port_role: role,
        };
        management_function(self.vendor_id, &identity).ok()
    }

    /// Its switch ID.
    pub fn id(&self) -> u64 {
        self.id
    }

    /// The data plane.
    pub fn model(&self) -> &Switch {
        self.window.switch()
    }

    /// The data plane's model.
    pub fn model_mut(&mut self) -> &mut Switch {
        self.window.switch_mut()
    }

    /// Offers a TLP at `port`'s ingress: a memory request for the
    /// switch's management BAR is executed against its CSR window,
    /// anything else forwarded by the data plane (what is for the CPU is
    /// among the deliveries returned).
    ///
    /// With an RTL data plane, the RTL carries what the data plane routes,
    /// held to the model's forwarding ([`crate::rtl_plane`]).
    pub fn forward(&mut self, port: PortIndex, bytes: &[u8]) -> Result<Forwarding, IngressError> {
        let executed = self.window.executes(port, bytes);
        let forwarding = self.window.forward(port, bytes)?;
        if let (Some(rtl), false) = (self.rtl.as_mut(), executed) {
            rtl.carry(&mut self.window, port, bytes, &forwarding);
        }
        Ok(forwarding)
    }

    /// Moves the data plane's clock on to `now`, simulated time, and
    /// returns the Completer Aborts it sends for the host requests that
    /// have waited the completion timeout by then (PCIe Base 6.0 §2.8,
    /// `Switch::advance_to`); requests forwarded after it are stamped
    /// `now`. With an RTL data plane, they are the model's alone
    /// ([`RtlPlane::timed_out`]).
    pub fn advance_to(&mut self, now: Duration) -> Vec<Delivery> {
        let timed_out = self.window.switch_mut().advance_to(now.as_nanos() as u64);
        if let (Some(rtl), false) = (self.rtl.as_mut(), timed_out.is_empty()) {
            rtl.timed_out(&timed_out);
        }
        timed_out
    }

    /// When the data plane next times out a host request, in simulated
    /// time (`Switch::next_timeout_ns`): when [`WeftSwitch::advance_to`]
    /// must be called for its Completer Abort to leave on time.
    pub fn next_timeout(&self) -> Option<Duration> {
        self.model().next_timeout_ns().map(Duration::from_nanos)
    }

    /// The completions the data plane synthesized for abandoned requests
    /// since the last call; with an RTL data plane, the RTL's are held to
    /// them ([`RtlPlane::synthesized`]).
    pub fn take_synthesized(&mut self) -> Vec<Delivery> {
        let synthesized = self.window.switch_mut().take_synthesized();
        if let (Some(rtl), false) = (self.rtl.as_mut(), synthesized.is_empty()) {
            rtl.synthesized(&mut self.window, &synthesized);
        }
        synthesized
    }

    /// The TLPs the CPU sent through the data plane's injector since the
    /// last call (`CsrWindow::take_injected`); with an RTL data plane, the
    /// RTL's injector sends them too, held to them
    /// ([`RtlPlane::injected`]).
    pub fn take_injected(&mut self) -> Vec<Delivery> {
        let injected = self.window.take_injected();
        if let Some(rtl) = self.rtl.as_mut() {
            rtl.injected(&mut self.window, &injected);
        }
        injected
    }

    /// Makes the RTL carry the switch's TLPs from now on: before anything
    /// writes its tables.
    pub fn use_rtl(&mut self, simulator: RtlSimulator) -> Result<(), RtlError> {
        self.rtl = Some(RtlPlane::new(&mut self.window, simulator)?);
        Ok(())
    }

    /// What its RTL data plane did, if it has one.
    pub fn rtl_summary(&self) -> Option<RtlSummary> {
        self.rtl.as_ref().map(RtlPlane::summary)
    }

    /// The data plane's CSR window, through which its tables are written
    /// and its registers read.
    pub fn csr_window(&mut self) -> &mut CsrWindow {
        &mut self.window
    }

    /// Sets the role `port`'s identity VSEC reports: how the board wires it.
    pub fn set_wired_role(&mut self, port: u8, role: VsecRole) {
        let function = self.function_for(port, role);
        if let Some(slot) = self.functions.get_mut(usize::from(port)) {
            *slot = function;
        }
    }

    /// The completion `port`'s management function sends back for a
    /// configuration request that arrived on its link. Only Type 0 requests
    /// address it; a Type 1 request is an Unsupported Request (§7.3.3).
    pub fn answer_config(&mut self, port: u8, packet: &Packet) -> Packet {
        let info = RequestInfo::of(&packet.header);
        let Body::Config(request) = packet.header.body else {
            return completion_for(
                &info,
                Default::default(),
                CompletionStatus::UnsupportedRequest,
                4,
                0,
                None,
            );
        };
        let space = self
            .functions
            .get_mut(usize::from(port))
            .and_then(Option::as_mut);
        let (status, data) = match space {
            Some(space) if request.config_type == ConfigType::Type0 => {
                let offset = request.byte_offset() & !3;
                match request.direction {
                    Direction::Read => {
                        let value =
                            self.window
                                .management_config(PortIndex(port), space, offset, None);
                        (
                            CompletionStatus::Successful,
                            Some(value.to_le_bytes().to_vec()),
                        )
                    }
                    Direction::Write => {
                        let mut lanes = [0u8; 4];
                        let n = packet.payload.len().min(4);
                        lanes[..n].copy_from_slice(&packet.payload[..n]);
                        let write = Some((u32::from_le_bytes(lanes), request.first_be));
                        self.window
                            .management_config(PortIndex(port), space, offset, write);
                        (CompletionStatus::Successful, None)
                    }
                }
            }
            _ => (CompletionStatus::UnsupportedRequest, None),
        };
        completion_for(&info, request.target, status, 4, 0, data)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use weft_devices::packet::config_read;
    use weft_pcie::config::vsec::{read_weft_identity, MANAGEMENT_DEVICE_ID};
    use weft_pcie::config::ConfigRead;
    use weft_pcie::tlp::Tag;
    use weft_pcie::Bdf;

    /// Reads a port's management function with configuration TLPs.
    struct Probe<'a> {
        switch: &'a mut WeftSwitch,
        port: u8,
    }

    impl ConfigRead for Probe<'_> {
        type Error = CompletionStatus;

        fn read_dword(&mut self, offset: u16) -> Result<u32, CompletionStatus> {
            let request = config_read(
                Bdf::new(0, 0, 0),
                Tag::from_8bit(1),
                Bdf::new(4, 0, 0),
                offset,
            );
            let reply = self.switch.answer_config(self.port, &request);
            match reply.header.body {
                Body::Completion(c) if c.status == CompletionStatus::Successful => {
                    let bytes: [u8; 4] = reply.payload[..4].try_into().expect("one DW");
                    Ok(u32::from_le_bytes(bytes))
                }
                Body::Completion(c) => Err(c.status),
                _ => Err(CompletionStatus::UnsupportedRequest),
            }
        }
    }

    #[test]
    fn a_port_answers_with_its_switch_identity() {
        let mut switch = WeftSwitch::new(0xfeed_0001, 8, 0x1d1d);
        switch.set_wired_role(6, VsecRole::Fabric);
        let identity = read_weft_identity(Probe {
            switch: &mut switch,
            port: 6,
        })
        .expect("a well-formed list")
        .expect("the identity VSEC");
        assert_eq!(
            identity,
            WeftIdentity {
                switch_id: 0xfeed_0001,
                port_count: 8,
                port_index: 6,
                port_role: VsecRole::Fabric,
            }
        );
        let vendor = Probe {
            switch: &mut switch,
            port: 2,
        }
        .read_dword(0)
        .expect("a read");
        assert_eq!(vendor, u32::from(MANAGEMENT_DEVICE_ID) << 16 | 0x1d1d);
    }
}
