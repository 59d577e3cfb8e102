//! A probe of the fabric manager on the soft core: its size, and the
//! instructions it retires per host configuration request.
//!
//! The firmware's ELF mixes the fabric manager with the network stack and
//! the management server, so it says little about the library alone. This
//! program links every entry point the
//! firmware calls — start (discovery, enumeration, routes), the
//! configuration mailbox, bind and unbind, the management request handler,
//! and the flash record's save, load and restore — with the firmware's
//! start-up code and memory map, over stub hardware: one fake GPU on port
//! 1 (vendor and device ID, a 16 MiB BAR that sizes as the spec says),
//! nothing on the other ports, and tables, hosts, links and flash whose
//! answers are opaque to the optimizer (`black_box`), so no path is folded
//! away. It enumerates, binds the GPU to host 0, lets the host number its
//! virtual switch and assign the BAR, then answers each kind of host
//! configuration request [`REPEAT`] times, recording the instructions
//! retired per request (`minstret`) in [`WEFT_FABRIC_ISS_INSTRUCTIONS`],
//! and waits in `wfi`.
//!
//! `cargo xtask fabric-size` builds it for `riscv32im-unknown-none-elf`
//! with the firmware's profile, reports its sections and
//! [`WEFT_FABRIC_MANAGER_BYTES`] (the manager's state, which the firmware
//! will hold in static RAM), and runs it on the ISS for the instruction
//! counts. A host build (as `cargo test --workspace` makes) only points at that.
#![cfg_attr(target_os = "none", no_std, no_main)]
#![deny(unsafe_code)]

#[cfg(target_os = "none")]
mod probe {
    use core::hint::black_box;
    use core::panic::PanicInfo;
    use core::sync::atomic::{AtomicU32, Ordering};

    use weft_fabric::binding::UnbindMode;
    use weft_fabric::board::{Board, BoardFault};
    use weft_fabric::hw::{
        ConfigFault, DataPlane, FabricConfig, HostConfigRequest, HostInterface, HostSendError,
        TableWriteError, Timer,
    };
    use weft_fabric::management::{handle, BoardInfo, Hardware, PortLink, PortLinks};
    use weft_fabric::manager::FabricManager;
    use weft_fabric::pcie::config::function::CLASS_PCI_BRIDGE;
    use weft_fabric::pcie::config::msi::MsiMessage;
    use weft_fabric::pcie::config::FunctionIdentity;
    use weft_fabric::pcie::tlp::{Completion, ConfigRequest, ConfigType, Tag};
    use weft_fabric::pcie::Bdf;
    use weft_fabric::persist::{load, Flash, FlashError};
    use weft_fabric::settings::{FabricSettings, HostPort};
    use weft_proto::{LinkSpeed, LinkState, LinkStatus, Request, ResetScope};
    use weft_regs::tables::{
        AddressRoute, Destination, FunctionOwner, HostIndex, IdMapping, LinkRequest, PortIndex,
        PortRole, Window,
    };

    /// The size of the manager's state on the soft core, read from the
    /// ELF by `cargo xtask fabric-size`.
    // Kept by name for the xtask: `no_mangle` is the only unsafe-code lint here.
    #[allow(unsafe_code)]
    #[no_mangle]
    #[used]
    pub static WEFT_FABRIC_MANAGER_BYTES: u32 = core::mem::size_of::<FabricManager>() as u32;

    /// Hardware whose every answer the optimizer cannot predict: the
    /// timer, the tables, the hosts, the links, the flash.
    struct Opaque;

    impl Timer for Opaque {
        fn now_ns(&mut self) -> u64 {
            black_box(0)
        }

        fn wait_until_ns(&mut self, deadline_ns: u64) {
            black_box(deadline_ns);
        }
    }

    impl DataPlane for Opaque {
        fn ports(&self) -> usize {
            black_box(8)
        }

        fn set_port_role(
            &mut self,
            port: PortIndex,
            role: PortRole,
        ) -> Result<(), TableWriteError> {
            black_box((port, role));
            black_box(Ok(()))
        }

        fn set_window(
            &mut self,
            port: PortIndex,
            index: usize,
            window: Window,
        ) -> Result<(), TableWriteError> {
            black_box((port, index, window));
            black_box(Ok(()))
        }

        fn set_port_settled(
            &mut self,
            port: PortIndex,
            settled: bool,
        ) -> Result<(), TableWriteError> {
            black_box((port, settled));
            black_box(Ok(()))
        }

        fn set_peer_window(
            &mut self,
            port: PortIndex,
            index: usize,
            window: Window,
            owner: Option<HostIndex>,
        ) -> Result<(), TableWriteError> {
            black_box((port, index, window, owner));
            black_box(Ok(()))
        }

        fn set_function_owner(
            &mut self,
            port: PortIndex,
            index: usize,
            entry: Option<FunctionOwner>,
        ) -> Result<(), TableWriteError> {
            black_box((port, index, entry));
            black_box(Ok(()))
        }

        fn set_id_mapping(
            &mut self,
            port: PortIndex,
            index: usize,
            mapping: Option<IdMapping>,
        ) -> Result<(), TableWriteError> {
            black_box((port, index, mapping));
            black_box(Ok(()))
        }

        fn set_completer_id(&mut self, port: PortIndex, id: Bdf) -> Result<(), TableWriteError> {
            black_box((port, id));
            black_box(Ok(()))
        }

        fn set_p2p_request_redirect(
            &mut self,
            port: PortIndex,
            redirect: bool,
        ) -> Result<(), TableWriteError> {
            black_box((port, redirect));
            black_box(Ok(()))
        }

        fn set_return_to_ingress(
            &mut self,
            port: PortIndex,
            enable: bool,
        ) -> Result<(), TableWriteError> {
            black_box((port, enable));
            black_box(Ok(()))
        }

        fn set_intx_swizzle(
            &mut self,
            port: PortIndex,
            swizzle: u8,
        ) -> Result<(), TableWriteError> {
            black_box((port, swizzle));
            black_box(Ok(()))
        }

        fn set_address_route(
            &mut self,
            index: usize,
            route: Option<AddressRoute>,
        ) -> Result<(), TableWriteError> {
            black_box((index, route));
            black_box(Ok(()))
        }

        fn set_bus_route(
            &mut self,
            bus: u8,
            to: Option<Destination>,
        ) -> Result<(), TableWriteError> {
            black_box((bus, to));
            black_box(Ok(()))
        }

        fn abandon_requests_to(&mut self, port: PortIndex) -> Result<(), TableWriteError> {
            black_box(port);
            black_box(Ok(()))
        }

        fn abandon_host_requests_to(
            &mut self,
            host_port: PortIndex,
            port: PortIndex,
        ) -> Result<(), TableWriteError> {
            black_box((host_port, port));
            black_box(Ok(()))
        }

        fn request_link(
            &mut self,
            port: PortIndex,
            request: LinkRequest,
        ) -> Result<(), TableWriteError> {
            black_box((port, request));
            black_box(Ok(()))
        }

        fn read_counter(&mut self, port: PortIndex, entry: u32) -> Result<u64, TableWriteError> {
            black_box((port, entry));
            black_box(Ok(0))
        }

        fn clear_counters(&mut self, port: PortIndex) -> Result<(), TableWriteError> {
            black_box(port);
            black_box(Ok(()))
        }

        fn set_completion_timeout_us(&mut self, microseconds: u32) -> Result<(), TableWriteError> {
            black_box(microseconds);
            black_box(Ok(()))
        }
    }

    impl HostInterface for Opaque {
        fn receive(&mut self) -> Option<HostConfigRequest> {
            black_box(None)
        }

        fn complete(
            &mut self,
            switch: u64,
            port: PortIndex,
            completion: Completion,
            data: Option<u32>,
        ) -> Result<(), HostSendError> {
            black_box((switch, port, completion, data));
            black_box(Ok(()))
        }

        fn send_msi(
            &mut self,
            switch: u64,
            port: PortIndex,
            requester: Bdf,
            message: MsiMessage,
        ) -> Result<(), HostSendError> {
            black_box((switch, port, requester, message));
            black_box(Ok(()))
        }
    }

    impl PortLinks for Opaque {
        fn link(&mut self, switch_id: u64, port: u8) -> PortLink {
            black_box((switch_id, port));
            black_box(PortLink {
                status: LinkStatus {
                    state: LinkState::Up,
                    speed: Some(LinkSpeed::Gen3),
                    width: 16,
                },
                max_speed: LinkSpeed::Gen3,
                max_width: 16,
            })
        }
    }

    impl Flash for Opaque {
        fn size(&self) -> u32 {
            black_box(8192)
        }

        fn read(&mut self, offset: u32, buf: &mut [u8]) -> Result<(), FlashError> {
            black_box((offset, &mut *buf));
            black_box(Ok(()))
        }

        fn erase(&mut self, offset: u32, len: u32) -> Result<(), FlashError> {
            black_box((offset, len));
            black_box(Ok(()))
        }

        fn write(&mut self, offset: u32, data: &[u8]) -> Result<(), FlashError> {
            black_box((offset, data));
            black_box(Ok(()))
        }
    }

    impl Board for Opaque {
        fn read_csr(&mut self, address: u32) -> Result<u32, BoardFault> {
            black_box(Ok(black_box(address)))
        }

        fn write_csr(&mut self, address: u32, value: u32) -> Result<(), BoardFault> {
            black_box((address, value));
            black_box(Ok(()))
        }

        fn config_flash(&mut self) -> Option<&mut dyn Flash> {
            Some(self)
        }

        fn resets(&self, scope: ResetScope) -> bool {
            black_box(black_box(scope) == ResetScope::Firmware)
        }

        fn schedule_reset(&mut self, scope: ResetScope) {
            black_box(scope);
        }
    }

    /// What the probe measured, in instructions retired, by index: the
    /// enumeration, then one request of each kind of [`REQUESTS`]; the
    /// last entry is 1 once everything ran.
    // Kept by name for the xtask: `no_mangle` is the only unsafe-code lint here.
    #[allow(unsafe_code)]
    #[no_mangle]
    pub static WEFT_FABRIC_ISS_INSTRUCTIONS: [AtomicU32; 2 + REQUESTS.len()] =
        [const { AtomicU32::new(0) }; 2 + REQUESTS.len()];

    /// How many times each request is answered.
    pub const REPEAT: u32 = 64;

    /// The host requests measured, after the host numbered its virtual
    /// switch (upstream port bus 1, slots on bus 2, slot 0's secondary bus
    /// 3) and assigned the GPU's BAR with Memory Space on: (type, target,
    /// offset, data for a write). The last two run with Memory Space off.
    pub const REQUESTS: [(ConfigType, Bdf, u16, Option<u32>); 8] = [
        (ConfigType::Type0, Bdf::new(1, 0, 0), 0x00, None),
        (ConfigType::Type1, Bdf::new(2, 0, 0), 0x18, None),
        (ConfigType::Type1, Bdf::new(3, 0, 0), 0x00, None),
        (ConfigType::Type1, Bdf::new(9, 0, 0), 0x00, None),
        (ConfigType::Type1, Bdf::new(3, 0, 0), 0x04, Some(0b110)),
        (
            ConfigType::Type1,
            Bdf::new(3, 0, 0),
            0x10,
            Some(0x9000_0000),
        ),
        (ConfigType::Type1, Bdf::new(3, 0, 0), 0x04, Some(0)),
        (
            ConfigType::Type1,
            Bdf::new(3, 0, 0),
            0x10,
            Some(0xffff_ffff),
        ),
    ];

    /// The GPU's 16 MiB 32-bit BAR: its address bits (§7.5.1.2.1).
    const BAR_MASK: u32 = !((16 << 20) - 1);

    /// Port 1's GPU, the only function in the fabric: IDs, Command, and a
    /// 32-bit 16 MiB BAR0; every other register reads 0 (no capabilities).
    struct OneGpu {
        command: u16,
        bar0: u32,
    }

    impl FabricConfig for OneGpu {
        fn read(&mut self, port: PortIndex, target: Bdf, offset: u16) -> Result<u32, ConfigFault> {
            if black_box(port) != PortIndex(1) || target.function() != 0 {
                return Err(ConfigFault::UnsupportedRequest);
            }
            Ok(match offset & !3 {
                0x00 => 0x2330_10de,
                0x04 => u32::from(self.command),
                0x08 => 0x0302_0001,
                0x10 => self.bar0,
                _ => 0,
            })
        }

        fn write(
            &mut self,
            port: PortIndex,
            target: Bdf,
            offset: u16,
            value: u32,
            byte_enables: u8,
        ) -> Result<(), ConfigFault> {
            if black_box(port) != PortIndex(1) || target.function() != 0 {
                return Err(ConfigFault::UnsupportedRequest);
            }
            match offset & !3 {
                0x04 if byte_enables & 0b11 == 0b11 => self.command = value as u16,
                0x10 if byte_enables == 0xf => self.bar0 = value & BAR_MASK,
                _ => {}
            }
            Ok(())
        }
    }

    fn host_request(
        config_type: ConfigType,
        target: Bdf,
        offset: u16,
        write: Option<u32>,
    ) -> HostConfigRequest {
        HostConfigRequest {
            switch: 0,
            port: PortIndex(0),
            request: ConfigRequest::new(
                config_type,
                Bdf::new(0, 0, 0),
                Tag::from_8bit(1),
                target,
                offset,
                write.map(|_| 0xf),
            ),
            data: write.unwrap_or(0),
        }
    }

    fn instructions() -> u32 {
        riscv::register::minstret::read() as u32
    }

    fn settings() -> FabricSettings {
        let identity = |device_id| FunctionIdentity {
            vendor_id: 0x1d1d,
            device_id,
            revision_id: 0,
            class_code: CLASS_PCI_BRIDGE,
        };
        let mut settings = FabricSettings {
            upstream_identity: identity(1),
            downstream_identity: identity(2),
            ..FabricSettings::default()
        };
        let host = HostPort {
            switch: 0,
            port: PortIndex(0),
            host: HostIndex(0),
            slots: 2,
        };
        // Room for four hosts.
        let _ = settings.hosts.push(black_box(host));
        settings
    }

    /// Every entry point of the manager, over [`OneGpu`] and [`Opaque`]
    /// hardware, one phase at a time: each phase is its own function, so
    /// the large values a phase moves through (the manager being built,
    /// the inventory being enumerated) share the stack instead of adding up
    /// in one frame.
    #[riscv_rt::entry]
    fn main() -> ! {
        let mut gpu = OneGpu {
            command: 0,
            bar0: 0,
        };
        let results = &WEFT_FABRIC_ISS_INSTRUCTIONS;
        let manager = build_manager();
        results[0].store(enumerate(manager, &mut gpu), Ordering::Relaxed);
        let gpu_id = black_box(Bdf::new(2, 0, 0));
        bind_and_assign(manager, &mut gpu, gpu_id);
        for (index, (config_type, target, offset, write)) in REQUESTS.into_iter().enumerate() {
            let request = host_request(config_type, target, offset, write);
            let per_request = answer_repeatedly(manager, &mut gpu, &request);
            results[1 + index].store(per_request, Ordering::Relaxed);
        }
        the_rest(manager, &mut gpu, gpu_id);
        results[1 + REQUESTS.len()].store(1, Ordering::Relaxed);
        loop {
            riscv::asm::wfi();
        }
    }

    /// The manager, configured in its static home.
    #[inline(never)]
    fn build_manager() -> &'static mut FabricManager {
        let manager = manager_static();
        if manager.configure(settings()).is_err() {
            halt()
        }
        manager
    }

    /// Starts the manager; returns the instructions it took.
    #[inline(never)]
    fn enumerate(manager: &mut FabricManager, gpu: &mut OneGpu) -> u32 {
        let before = instructions();
        let _ = black_box(manager.start(gpu, &mut Opaque, &mut Opaque, 0));
        instructions().wrapping_sub(before)
    }

    /// Binds the GPU to host 0's slot 0; the host numbers its virtual
    /// switch and assigns the GPU's BAR with Memory Space on.
    #[inline(never)]
    fn bind_and_assign(manager: &mut FabricManager, gpu: &mut OneGpu, gpu_id: Bdf) {
        let _ = black_box(manager.bind(gpu_id, HostIndex(0), 0, &mut Opaque, &mut Opaque));
        for (config_type, target, offset, value) in [
            (ConfigType::Type0, Bdf::new(1, 0, 0), 0x18, 0x0004_0201),
            (ConfigType::Type1, Bdf::new(2, 0, 0), 0x18, 0x0003_0302),
            (ConfigType::Type1, Bdf::new(3, 0, 0), 0x10, 0x9000_0000),
            (ConfigType::Type1, Bdf::new(3, 0, 0), 0x04, 0b110),
        ] {
            let request = host_request(config_type, target, offset, Some(value));
            let _ = black_box(manager.handle_config(&request, gpu, &mut Opaque, &mut Opaque));
        }
    }

    /// Answers `request` [`REPEAT`] times; returns the instructions per answer.
    #[inline(never)]
    fn answer_repeatedly(
        manager: &mut FabricManager,
        gpu: &mut OneGpu,
        request: &HostConfigRequest,
    ) -> u32 {
        let before = instructions();
        for _ in 0..REPEAT {
            let request = black_box(request);
            let _ = black_box(manager.handle_config(request, gpu, &mut Opaque, &mut Opaque));
        }
        instructions().wrapping_sub(before) / REPEAT
    }

    /// The rest of what the firmware calls, for its size: the mailbox
    /// loop, unbind, the management handler, the flash record.
    #[inline(never)]
    fn the_rest(manager: &mut FabricManager, gpu: &mut OneGpu, gpu_id: Bdf) {
        let (mut plane, mut hosts, mut links, mut flash, mut timer) =
            (Opaque, Opaque, Opaque, Opaque, Opaque);
        let mut board = Opaque;
        let _ = black_box(manager.service(gpu, &mut plane, &mut hosts));
        let mode = black_box(UnbindMode::Graceful);
        let _ = black_box(manager.unbind(gpu_id, mode, &mut plane, &mut hosts));
        let info = BoardInfo {
            board: "probe",
            version: (0, 1, 0),
            build: "",
            ports: 8,
            authenticated: false,
        };
        let request = black_box(Request::Ping);
        let hardware = Hardware {
            config: gpu,
            fabric: &mut plane,
            hosts: &mut hosts,
            links: &mut links,
            firmware: None,
            timer: Some(&mut timer),
            board: &mut board,
        };
        let _ = black_box(handle(manager, &info, &request, &[], hardware));
        let _ = black_box(manager.save_config(&mut flash));
        if let Ok(Some(stored)) = load(&mut flash) {
            let _ = black_box(manager.restore(&stored, &mut plane, &mut hosts));
        }
    }

    /// The manager's home in static RAM, built at link time, as the
    /// firmware will hold it: built on the stack and moved, it and the
    /// copies it moved through outgrew the data RAM.
    #[allow(unsafe_code)]
    fn manager_static() -> &'static mut FabricManager {
        static mut MANAGER: FabricManager = FabricManager::EMPTY;
        // SAFETY: called once, from the only hart's entry function, so this
        // is the only reference to MANAGER there ever is.
        unsafe { &mut *core::ptr::addr_of_mut!(MANAGER) }
    }

    fn halt() -> ! {
        loop {
            core::hint::spin_loop();
        }
    }

    /// A panic halts the core, as in the firmware.
    #[panic_handler]
    fn on_panic(_info: &PanicInfo) -> ! {
        halt()
    }
}

#[cfg(not(target_os = "none"))]
fn main() {
    eprintln!(
        "weft-fabric-size is a size probe for the soft core (riscv32im-unknown-none-elf); \
         run `cargo xtask fabric-size`"
    );
}
