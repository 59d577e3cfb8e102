//! [`HostInterface`] over the data plane's mailbox and injector
//! (`weft_regs::csr::mailbox`, `inject`): hosts' configuration requests in,
//! completions and MSI writes out, each a whole TLP as weft-pcie emits it.

use weft_fabric::hw::{HostConfigRequest, HostInterface, HostSendError};
use weft_pcie::config::msi::MsiMessage;
use weft_pcie::tlp::{
    AddressType, Attributes, Body, Completion, Header, MemoryOp, MemoryRequest, Prefixes, Tag, Tlp,
    TrafficClass,
};
use weft_pcie::Bdf;
use weft_regs::csr::{global, inject, inject_data, mailbox, mailbox_data, port};
use weft_regs::tables::PortIndex;

use crate::CsrBus;

/// Bytes of the longest TLP the mailbox holds.
const MAILBOX_BYTES: usize = mailbox::TLP_DWORDS as usize * 4;
/// Bytes of the longest TLP the injector sends.
const INJECT_BYTES: usize = inject::TLP_DWORDS as usize * 4;

/// The host-facing side of one switch's data plane, through its CSR window.
pub struct CsrHostInterface<B> {
    bus: B,
    switch: u64,
    discarded: u32,
}

impl<B: CsrBus> CsrHostInterface<B> {
    /// The mailbox and injector `bus` reaches, of the switch whose switch
    /// ID is `switch`. Requests it receives name that switch; completions
    /// and MSIs for any other are refused as [`HostSendError::NoSuchPort`].
    pub fn new(bus: B, switch: u64) -> Self {
        CsrHostInterface {
            bus,
            switch,
            discarded: 0,
        }
    }

    /// TLPs taken from the mailbox that were not configuration requests
    /// (messages and completions for the CPU, which [`HostInterface`] does
    /// not carry), or not well-formed: each was popped and counted here.
    pub fn discarded(&self) -> u32 {
        self.discarded
    }

    /// Copies the mailbox's head TLP into `tlp` and pops it: its source
    /// port and length in bytes, or `None` while the mailbox is empty.
    fn take_head(&mut self, tlp: &mut [u8; MAILBOX_BYTES]) -> Option<(PortIndex, usize)> {
        let status = self.bus.read32(mailbox::STATUS.address(0, 0));
        if mailbox::PENDING.decode(status) == 0 {
            return None;
        }
        let dwords = (mailbox::DWORDS.decode(status) as usize).min(tlp.len() / 4);
        for (n, bytes) in tlp.chunks_exact_mut(4).take(dwords).enumerate() {
            let dw = self.bus.read32(mailbox_data::DATA.address(0, n as u32));
            bytes.copy_from_slice(&dw.to_be_bytes());
        }
        self.bus
            .write32(mailbox::POP.address(0, 0), mailbox::DONE.encode(1));
        let from = PortIndex(mailbox::PORT.decode(status) as u8);
        Some((from, dwords * 4))
    }

    /// Whether `port` exists and is an enabled host port.
    fn is_host_port(&mut self, port: PortIndex) -> bool {
        let ports = global::PORT_COUNT.decode(self.bus.read32(global::PORTS.address(0, 0)));
        if u32::from(port.0) >= ports.min(port::LAYOUT.instances) {
            return false;
        }
        let control = self.bus.read32(port::CONTROL.address(u32::from(port.0), 0));
        port::ENABLE.decode(control) == 1 && port::ROLE.decode(control) == port::ROLE_HOST
    }

    /// Sends `tlp` out of host port `port` of switch `switch` through the injector.
    fn inject(&mut self, switch: u64, port: PortIndex, tlp: &Tlp<'_>) -> Result<(), HostSendError> {
        if switch != self.switch || !self.is_host_port(port) {
            return Err(HostSendError::NoSuchPort(port));
        }
        let status = self.bus.read32(inject::STATUS.address(0, 0));
        if inject::READY.decode(status) == 0 {
            return Err(HostSendError::QueueFull(port));
        }
        let mut bytes = [0; INJECT_BYTES];
        let len = tlp
            .emit(&mut bytes)
            .expect("completions and MSI writes are a few DWs, built consistently here");
        let dwords = len.div_ceil(4);
        for (n, dw) in bytes.chunks_exact(4).take(dwords).enumerate() {
            let dw = u32::from_be_bytes([dw[0], dw[1], dw[2], dw[3]]);
            self.bus.write32(inject_data::DATA.address(0, n as u32), dw);
        }
        let send = inject::PORT.encode(u32::from(port.0)) | inject::DWORDS.encode(dwords as u32);
        self.bus.write32(inject::SEND.address(0, 0), send);
        Ok(())
    }
}

/// A TLP of `body` and `payload`, without prefixes or digest.
fn tlp(body: Body, payload: &[u8]) -> Tlp<'_> {
    Tlp {
        prefixes: Prefixes::default(),
        header: Header {
            digest_present: false,
            poisoned: false,
            body,
        },
        payload,
        digest: None,
    }
}

impl<B: CsrBus> HostInterface for CsrHostInterface<B> {
    /// Takes TLPs from the mailbox until one is a configuration request;
    /// anything else ahead of it is [discarded](CsrHostInterface::discarded).
    fn receive(&mut self) -> Option<HostConfigRequest> {
        let mut bytes = [0; MAILBOX_BYTES];
        loop {
            let (port, len) = self.take_head(&mut bytes)?;
            match Tlp::parse(&bytes[..len]) {
                Ok(Tlp {
                    header:
                        Header {
                            body: Body::Config(request),
                            ..
                        },
                    payload,
                    ..
                }) => {
                    // §7.2: configuration space is little-endian, byte n of the DW first.
                    let data = match payload {
                        [b0, b1, b2, b3, ..] => u32::from_le_bytes([*b0, *b1, *b2, *b3]),
                        _ => 0,
                    };
                    return Some(HostConfigRequest {
                        switch: self.switch,
                        port,
                        request,
                        data,
                    });
                }
                _ => self.discarded = self.discarded.wrapping_add(1),
            }
        }
    }

    fn complete(
        &mut self,
        switch: u64,
        port: PortIndex,
        completion: Completion,
        data: Option<u32>,
    ) -> Result<(), HostSendError> {
        let payload = data.map(u32::to_le_bytes);
        let payload: &[u8] = payload.as_ref().map_or(&[], |dw| dw);
        self.inject(switch, port, &tlp(Body::Completion(completion), payload))
    }

    /// §6.1.4: an MSI is a one-DW memory write of the message data, its
    /// 16 bits in the DW's low half (§7.7.1.5), to the message address.
    fn send_msi(
        &mut self,
        switch: u64,
        port: PortIndex,
        requester: Bdf,
        message: MsiMessage,
    ) -> Result<(), HostSendError> {
        let write = MemoryRequest {
            op: MemoryOp::Write,
            traffic_class: TrafficClass::default(),
            attributes: Attributes::default(),
            address_type: AddressType::default(),
            requester,
            tag: Tag::default(),
            address: message.address & !3,
            length_dw: 1,
            first_be: 0b1111,
            last_be: 0,
            processing_hint: None,
        };
        let data = u32::from(message.data).to_le_bytes();
        self.inject(switch, port, &tlp(Body::Memory(write), &data))
    }
}
