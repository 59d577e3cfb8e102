//! The CPU's side of the data plane's mailbox and injector
//! (`weft_regs::csr::mailbox`, `inject`), which the fabric manager's TLP
//! paths share: [`FabricConfig`] (its own configuration requests out,
//! their completions in), [`FabricMemory`] (its memory requests to other
//! switches' CSR windows, the same way) and [`HostInterface`] (hosts' configuration
//! requests in, completions and MSI writes out), each a whole TLP as
//! weft-pcie emits it.
//!
//! One mailbox carries both directions' arrivals in order, so one
//! [`CsrMailbox`] implements both traits: while it waits for the
//! completion of its own request it holds the hosts' requests that arrive
//! first in a small queue, which [`HostInterface::receive`] empties before
//! reading the mailbox again. [`SharedMailbox`] hands one mailbox to the
//! manager as both traits at once.
//!
//! The data plane's interrupt ([`CsrMailbox::set_interrupts`]) lets the CPU
//! sleep until a TLP waits in the mailbox or the injector drops one: both
//! are level-sensitive, so reading the mailbox until it is empty
//! ([`HostInterface::receive`] returning `None`) and clearing the
//! injector's drop flags ([`CsrMailbox::acknowledge_drops`]) lowers the
//! line. The requests held while the manager waited raise nothing: check
//! [`CsrMailbox::holds_requests`] before sleeping.

use core::cell::RefCell;

use heapless::Deque;
use weft_fabric::hw::{
    ConfigFault, ConfigPath, ConfigRequests, FabricMemory, HostConfigRequest, HostInterface,
    HostSendError, Timer,
};
use weft_pcie::config::msi::MsiMessage;
use weft_pcie::tlp::{
    AddressType, Attributes, Body, Completion, CompletionStatus, ConfigRequest, ConfigType, Header,
    MemoryOp, MemoryRequest, Prefixes, Tag, Tlp, TrafficClass,
};
use weft_pcie::Bdf;
use weft_regs::csr::{global, inject, inject_data, mailbox, mailbox_data, port};
use weft_regs::soc::gpio;
use weft_regs::tables::PortIndex;

use crate::CsrBus;

/// Bytes of the longest TLP the mailbox holds.
pub const MAILBOX_BYTES: usize = mailbox::TLP_DWORDS as usize * 4;
/// Bytes of the longest TLP the injector sends.
const INJECT_BYTES: usize = inject::TLP_DWORDS as usize * 4;

/// Copies the head TLP of the mailbox behind `bus` into `tlp` and pops it,
/// as the CPU reads it (STATUS, `mailbox_data`, POP): its source port and
/// length in bytes, or `None` while the mailbox is empty.
pub fn take_head<B: CsrBus + ?Sized>(
    bus: &mut B,
    tlp: &mut [u8; MAILBOX_BYTES],
) -> Option<(PortIndex, usize)> {
    let status = bus.read32(mailbox::STATUS.address(0, 0));
    if mailbox::PENDING.decode(status) == 0 {
        return None;
    }
    let dwords = (mailbox::DWORDS.decode(status) as usize).min(tlp.len() / 4);
    for (n, bytes) in tlp.chunks_exact_mut(4).take(dwords).enumerate() {
        let dw = bus.read32(mailbox_data::DATA.address(0, n as u32));
        bytes.copy_from_slice(&dw.to_be_bytes());
    }
    bus.write32(mailbox::POP.address(0, 0), mailbox::DONE.encode(1));
    let from = PortIndex(mailbox::PORT.decode(status) as u8);
    Some((from, dwords * 4))
}

/// Hosts' configuration requests held while the manager waits for a
/// completion of its own. Each host has one configuration request
/// outstanding at a time (a root port's configuration requests are
/// non-posted and serialized by its software), so this covers a host per
/// entry; a request beyond it is dropped and counted
/// ([`CsrMailbox::discarded`]), and its host times out and retries.
pub const HELD_REQUESTS: usize = 8;

/// How long the manager waits for the completion of one of its
/// configuration requests: the top of the Completion Timeout's default
/// range, 50 µs to 50 ms (PCIe Base 6.0 §2.8, §7.5.3.16). A host's request
/// the manager forwards waits less, the switch's completion timeout
/// (`weft_fabric::virtualize::FORWARDED_TIMEOUT_NS`, through
/// `limit_completion_wait`).
pub const COMPLETION_TIMEOUT_NS: u64 = 50_000_000;

/// The mailbox and injector of one switch's data plane, through its CSR window.
pub struct CsrMailbox<B, T> {
    bus: B,
    timer: T,
    switch: u64,
    manager: Bdf,
    next_tag: u8,
    held: Deque<HostConfigRequest, HELD_REQUESTS>,
    discarded: u32,
    /// How long a configuration request waits for its completion.
    config_wait_ns: u64,
    /// The bus address of the register showing the ports' links
    /// ([`CsrMailbox::with_link_state`]), if a board reports them.
    links: Option<u32>,
}

impl<B: CsrBus, T: Timer> CsrMailbox<B, T> {
    /// The mailbox and injector `bus` reaches, of the switch whose switch
    /// ID is `switch`, for a fabric manager whose own fabric ID (the
    /// requester of its configuration requests, whose bus routes to the
    /// CPU) is `manager`; `timer` times its requests out. Host requests it
    /// receives name that switch; completions and MSIs for any other are
    /// refused as [`HostSendError::NoSuchPort`].
    pub fn new(bus: B, timer: T, switch: u64, manager: Bdf) -> Self {
        CsrMailbox {
            bus,
            timer,
            switch,
            manager,
            next_tag: 0,
            held: Deque::new(),
            discarded: 0,
            config_wait_ns: COMPLETION_TIMEOUT_NS,
            links: None,
        }
    }

    /// The mailbox, told where the board shows its ports' links: the
    /// register at bus address `address`, laid out as `weft_chip` drives
    /// the SoC's GPIO inputs (`weft_regs::soc::gpio::INPUT`: LINK_UP, bit p
    /// for port p, meaningful while LINKS_REPORTED is set). The manager's
    /// requests to a port whose link is down then end at once with
    /// Unsupported Request, as PCIe Base 6.0 §2.9.1 has a Port in DL_Down
    /// complete the non-posted requests it is given, where otherwise they
    /// would leave into a link that discards them and wait out the
    /// completion timeout.
    pub fn with_link_state(mut self, address: u32) -> Self {
        self.links = Some(address);
        self
    }

    /// Whether the board shows `port`'s link down.
    fn link_down(&mut self, port: PortIndex) -> bool {
        let Some(address) = self.links else {
            return false;
        };
        gpio::links_up(self.bus.read32(address))
            .is_some_and(|up| port.0 >= 31 || up >> port.0 & 1 == 0)
    }

    /// TLPs taken from the mailbox that neither trait carries (messages,
    /// completions nobody waits for any more, malformed TLPs), and host
    /// requests beyond [`HELD_REQUESTS`]: each was popped and counted here.
    pub fn discarded(&self) -> u32 {
        self.discarded
    }

    /// Makes the data plane raise its interrupt while a TLP waits in the
    /// mailbox and while the injector flags a dropped TLP (`mailbox` and
    /// `inject` INT_ENABLE), or stop it raising either.
    pub fn set_interrupts(&mut self, on: bool) {
        self.bus.write32(
            mailbox::INT_ENABLE.address(0, 0),
            mailbox::ON_PENDING.encode(u32::from(on)),
        );
        self.bus.write32(
            inject::INT_ENABLE.address(0, 0),
            inject::ON_DROPPED.encode(u32::from(on)),
        );
    }

    /// Whether hosts' requests taken from the mailbox while the manager
    /// waited for a completion are still to be received: they raise no
    /// interrupt, being out of the mailbox already.
    pub fn holds_requests(&self) -> bool {
        !self.held.is_empty()
    }

    /// Clears the injector's drop flags (`inject` STATUS.MALFORMED and
    /// NO_SUCH_PORT), which lowers its interrupt, and says which were set:
    /// `None` if no TLP was dropped since the last call.
    pub fn acknowledge_drops(&mut self) -> Option<InjectDrops> {
        let flags = inject::MALFORMED.mask() | inject::NO_SUCH_PORT.mask();
        let status = self.bus.read32(inject::STATUS.address(0, 0)) & flags;
        if status == 0 {
            return None;
        }
        self.bus.write32(inject::STATUS.address(0, 0), status);
        Some(InjectDrops {
            malformed: inject::MALFORMED.decode(status) == 1,
            no_such_port: inject::NO_SUCH_PORT.decode(status) == 1,
        })
    }

    /// The timer the mailbox waits on.
    pub fn timer(&mut self) -> &mut T {
        &mut self.timer
    }

    /// Takes the mailbox's head TLP: a host's configuration request, a
    /// completion (with its one data DW), or `None` once the mailbox is
    /// empty. Anything else is counted as discarded and skipped.
    fn take(&mut self) -> Option<Arrival> {
        let mut bytes = [0; MAILBOX_BYTES];
        loop {
            let (port, len) = take_head(&mut self.bus, &mut bytes)?;
            let Ok(tlp) = Tlp::parse(&bytes[..len]) else {
                self.discarded = self.discarded.wrapping_add(1);
                continue;
            };
            // §7.2: configuration space is little-endian, byte n of the DW first.
            let data = match tlp.payload {
                [b0, b1, b2, b3, ..] => u32::from_le_bytes([*b0, *b1, *b2, *b3]),
                _ => 0,
            };
            match tlp.header.body {
                Body::Config(request) => {
                    return Some(Arrival::Host(HostConfigRequest {
                        switch: self.switch,
                        port,
                        request,
                        data,
                    }))
                }
                Body::Completion(completion) => return Some(Arrival::Completion(completion, data)),
                _ => self.discarded = self.discarded.wrapping_add(1),
            }
        }
    }

    /// The number of ports the data plane has.
    fn port_count(&mut self) -> u32 {
        global::PORT_COUNT
            .decode(self.bus.read32(global::PORTS.address(0, 0)))
            .min(port::LAYOUT.instances)
    }

    /// Whether `port` exists and is an enabled host port.
    fn is_host_port(&mut self, port: PortIndex) -> bool {
        if u32::from(port.0) >= self.port_count() {
            return false;
        }
        let control = self.bus.read32(port::CONTROL.address(u32::from(port.0), 0));
        port::ENABLE.decode(control) == 1 && port::ROLE.decode(control) == port::ROLE_HOST
    }

    /// Writes `tlp` to the injector and sends it out of `port`, if the
    /// injector is ready; `false` if it is not.
    fn send(&mut self, port: PortIndex, tlp: &Tlp<'_>) -> bool {
        let status = self.bus.read32(inject::STATUS.address(0, 0));
        if inject::READY.decode(status) == 0 {
            return false;
        }
        let mut bytes = [0; INJECT_BYTES];
        let len = tlp
            .emit(&mut bytes)
            .expect("the TLPs sent here are a few DWs, built consistently here");
        let dwords = len.div_ceil(4);
        for (n, dw) in bytes.chunks_exact(4).take(dwords).enumerate() {
            let dw = u32::from_be_bytes([dw[0], dw[1], dw[2], dw[3]]);
            self.bus.write32(inject_data::DATA.address(0, n as u32), dw);
        }
        let send = inject::PORT.encode(u32::from(port.0)) | inject::DWORDS.encode(dwords as u32);
        self.bus.write32(inject::SEND.address(0, 0), send);
        true
    }

    /// Sends `tlp` out of host port `port` of switch `switch` through the injector.
    fn send_to_host(
        &mut self,
        switch: u64,
        port: PortIndex,
        tlp: &Tlp<'_>,
    ) -> Result<(), HostSendError> {
        if switch != self.switch || !self.is_host_port(port) {
            return Err(HostSendError::NoSuchPort(port));
        }
        if self.send(port, tlp) {
            Ok(())
        } else {
            Err(HostSendError::QueueFull(port))
        }
    }

    /// Sends the manager's configuration request of `config_type` out of
    /// `port` and waits for its completion: the data DW of a read.
    fn request(
        &mut self,
        config_type: ConfigType,
        port: PortIndex,
        target: Bdf,
        offset: u16,
        write: Option<(u32, u8)>,
    ) -> Result<u32, ConfigFault> {
        let tag = self.next_tag();
        let request = ConfigRequest::new(
            config_type,
            self.manager,
            tag,
            target,
            offset,
            write.map(|(_, byte_enables)| byte_enables),
        );
        let payload = write.map(|(value, _)| value.to_le_bytes());
        let payload: &[u8] = payload.as_ref().map_or(&[], |dw| dw);
        let wait_ns = self.config_wait_ns;
        self.exchange(
            port,
            &tlp(Body::Config(request), payload),
            Some(tag),
            wait_ns,
        )
    }

    /// A tag for the manager's next non-posted request.
    fn next_tag(&mut self) -> Tag {
        self.next_tag = self.next_tag.wrapping_add(1);
        Tag::from_8bit(self.next_tag)
    }

    /// Sends the manager's request `request` out of `port` once the
    /// injector takes it; for a non-posted one (with its `tag`), waits
    /// for its completion, holding the hosts' requests that arrive first:
    /// the data DW it carries (0 without data). It fails with
    /// [`ConfigFault::Timeout`] once `wait_ns` has passed since it began,
    /// and at once with [`ConfigFault::UnsupportedRequest`] where the board
    /// shows `port`'s link down ([`CsrMailbox::with_link_state`]).
    fn exchange(
        &mut self,
        port: PortIndex,
        request: &Tlp<'_>,
        tag: Option<Tag>,
        wait_ns: u64,
    ) -> Result<u32, ConfigFault> {
        if u32::from(port.0) >= self.port_count() {
            return Err(ConfigFault::NoSuchPort(port));
        }
        if self.link_down(port) {
            return Err(ConfigFault::UnsupportedRequest);
        }
        let deadline = self.timer.now_ns().saturating_add(wait_ns);
        while !self.send(port, request) {
            if self.timer.now_ns() >= deadline {
                return Err(ConfigFault::Timeout);
            }
        }
        let Some(tag) = tag else {
            return Ok(0);
        };
        loop {
            match self.take() {
                Some(Arrival::Completion(completion, data))
                    if (completion.requester, completion.tag) == (self.manager, tag) =>
                {
                    return match completion.status {
                        CompletionStatus::Successful => Ok(data),
                        CompletionStatus::UnsupportedRequest => {
                            Err(ConfigFault::UnsupportedRequest)
                        }
                        CompletionStatus::RequestRetry => Err(ConfigFault::RequestRetry),
                        CompletionStatus::CompleterAbort => Err(ConfigFault::CompleterAbort),
                    };
                }
                Some(Arrival::Host(host)) => {
                    let dropped = self.held.push_back(host).is_err();
                    self.discarded = self.discarded.wrapping_add(u32::from(dropped));
                }
                // A completion of an earlier request that timed out.
                Some(Arrival::Completion(..)) => self.discarded = self.discarded.wrapping_add(1),
                None if self.timer.now_ns() >= deadline => return Err(ConfigFault::Timeout),
                None => {}
            }
        }
    }
}

/// Why the injector dropped TLPs the CPU sent (`inject` STATUS), as
/// [`CsrMailbox::acknowledge_drops`] found them.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct InjectDrops {
    /// A SEND did not describe a well-formed TLP (STATUS.MALFORMED).
    pub malformed: bool,
    /// A SEND named a port the data plane does not have (STATUS.NO_SUCH_PORT).
    pub no_such_port: bool,
}

/// What the mailbox delivered.
enum Arrival {
    /// A host's configuration request.
    Host(HostConfigRequest),
    /// A completion, with its first data DW (0 without data).
    Completion(Completion, u32),
}

/// A memory request `op` of one whole DW (all byte enables) at the DW
/// holding `address`, from `requester` with `tag`.
fn one_dw_memory_request(op: MemoryOp, requester: Bdf, tag: Tag, address: u64) -> MemoryRequest {
    MemoryRequest {
        op,
        traffic_class: TrafficClass::default(),
        attributes: Attributes::default(),
        address_type: AddressType::default(),
        requester,
        tag,
        address: address & !3,
        length_dw: 1,
        first_be: 0b1111,
        last_be: 0,
        processing_hint: None,
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

/// Every request goes out of a port of the manager's own switch: Type 0
/// for the function on the link, Type 1 for a bus below it or routed
/// through the fabric (the switches on the way route it by bus, §7.3.3).
impl<B: CsrBus, T: Timer> ConfigRequests for CsrMailbox<B, T> {
    fn config_request(
        &mut self,
        path: ConfigPath,
        target: Bdf,
        offset: u16,
        write: Option<(u32, u8)>,
    ) -> Result<u32, ConfigFault> {
        let (config_type, port) = match path {
            ConfigPath::Link(port) => (ConfigType::Type0, port),
            ConfigPath::Below(port) | ConfigPath::Routed(port) => (ConfigType::Type1, port),
        };
        self.request(config_type, port, target, offset, write)
    }

    /// Configuration requests wait `timeout_ns`, or
    /// [`COMPLETION_TIMEOUT_NS`] again; the manager's memory requests
    /// always wait [`COMPLETION_TIMEOUT_NS`].
    fn limit_completion_wait(&mut self, timeout_ns: Option<u64>) {
        self.config_wait_ns = timeout_ns.unwrap_or(COMPLETION_TIMEOUT_NS);
    }
}

/// One-DW memory requests out of a port of the manager's own switch, as
/// its configuration requests go: a read waits for its completion, which
/// the switches route back by the manager's bus; data is little-endian,
/// payload byte n the DW's byte n (memory, like configuration space).
impl<B: CsrBus, T: Timer> FabricMemory for CsrMailbox<B, T> {
    fn read_memory(&mut self, via: PortIndex, address: u64) -> Result<u32, ConfigFault> {
        let tag = self.next_tag();
        let request = one_dw_memory_request(MemoryOp::Read, self.manager, tag, address);
        self.exchange(
            via,
            &tlp(Body::Memory(request), &[]),
            Some(tag),
            COMPLETION_TIMEOUT_NS,
        )
    }

    fn write_memory(
        &mut self,
        via: PortIndex,
        address: u64,
        value: u32,
    ) -> Result<(), ConfigFault> {
        let request = one_dw_memory_request(MemoryOp::Write, self.manager, Tag::default(), address);
        let data = value.to_le_bytes();
        self.exchange(
            via,
            &tlp(Body::Memory(request), &data),
            None,
            COMPLETION_TIMEOUT_NS,
        )
        .map(|_| ())
    }
}

impl<B: CsrBus, T: Timer> HostInterface for CsrMailbox<B, T> {
    /// The oldest request held while the manager waited, else the
    /// mailbox's: TLPs ahead of a configuration request there that are
    /// none are [discarded](CsrMailbox::discarded).
    fn receive(&mut self) -> Option<HostConfigRequest> {
        if let Some(held) = self.held.pop_front() {
            return Some(held);
        }
        loop {
            match self.take()? {
                Arrival::Host(request) => return Some(request),
                Arrival::Completion(..) => self.discarded = self.discarded.wrapping_add(1),
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
        self.send_to_host(switch, port, &tlp(Body::Completion(completion), payload))
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
        let write =
            one_dw_memory_request(MemoryOp::Write, requester, Tag::default(), message.address);
        let data = u32::from(message.data).to_le_bytes();
        self.send_to_host(switch, port, &tlp(Body::Memory(write), &data))
    }
}

/// One [`CsrMailbox`] as the manager's [`FabricConfig`] and
/// [`HostInterface`] at once (`FabricManager::service` takes both): every
/// call borrows the mailbox for its own length, so a configuration request
/// made while answering a host's holds the hosts' requests behind it in
/// the same mailbox.
pub struct SharedMailbox<'a, B, T>(pub &'a RefCell<CsrMailbox<B, T>>);

impl<B, T> Clone for SharedMailbox<'_, B, T> {
    fn clone(&self) -> Self {
        *self
    }
}

impl<B, T> Copy for SharedMailbox<'_, B, T> {}

impl<B: CsrBus, T: Timer> ConfigRequests for SharedMailbox<'_, B, T> {
    fn config_request(
        &mut self,
        path: ConfigPath,
        target: Bdf,
        offset: u16,
        write: Option<(u32, u8)>,
    ) -> Result<u32, ConfigFault> {
        self.0
            .borrow_mut()
            .config_request(path, target, offset, write)
    }

    fn limit_completion_wait(&mut self, timeout_ns: Option<u64>) {
        self.0.borrow_mut().limit_completion_wait(timeout_ns);
    }
}

impl<B: CsrBus, T: Timer> FabricMemory for SharedMailbox<'_, B, T> {
    fn read_memory(&mut self, via: PortIndex, address: u64) -> Result<u32, ConfigFault> {
        self.0.borrow_mut().read_memory(via, address)
    }

    fn write_memory(
        &mut self,
        via: PortIndex,
        address: u64,
        value: u32,
    ) -> Result<(), ConfigFault> {
        self.0.borrow_mut().write_memory(via, address, value)
    }
}

impl<B: CsrBus, T: Timer> HostInterface for SharedMailbox<'_, B, T> {
    fn receive(&mut self) -> Option<HostConfigRequest> {
        self.0.borrow_mut().receive()
    }

    fn complete(
        &mut self,
        switch: u64,
        port: PortIndex,
        completion: Completion,
        data: Option<u32>,
    ) -> Result<(), HostSendError> {
        self.0.borrow_mut().complete(switch, port, completion, data)
    }

    fn send_msi(
        &mut self,
        switch: u64,
        port: PortIndex,
        requester: Bdf,
        message: MsiMessage,
    ) -> Result<(), HostSendError> {
        self.0
            .borrow_mut()
            .send_msi(switch, port, requester, message)
    }
}
