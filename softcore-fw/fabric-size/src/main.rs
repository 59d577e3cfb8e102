//! A size probe for the fabric manager on the soft core.
//!
//! The firmware does not drive the fabric manager yet, so its ELF says
//! nothing about the library's size. This program links every entry point
//! the firmware will call — start (discovery, enumeration, routes), the
//! configuration mailbox, bind and unbind, the management request handler,
//! and the flash record's save, load and restore — over hardware stubs
//! whose every answer is opaque to the optimizer (`black_box`), so no path
//! is folded away. It is built for `riscv32im-unknown-none-elf` with the
//! firmware's profile by `cargo xtask fabric-size`, which reports its
//! sections and [`WEFT_FABRIC_MANAGER_BYTES`], the manager's state that the
//! firmware will hold in static RAM.
//!
//! A host build (as `cargo test --workspace` makes) only points at that.
#![cfg_attr(target_os = "none", no_std, no_main)]
#![deny(unsafe_code)]

#[cfg(target_os = "none")]
mod probe {
    use core::hint::black_box;
    use core::panic::PanicInfo;

    use weft_fabric::binding::UnbindMode;
    use weft_fabric::hw::{
        ConfigFault, DataPlane, FabricConfig, HostConfigRequest, HostInterface, HostSendError,
        TableWriteError, Timer,
    };
    use weft_fabric::management::{handle, BoardInfo, Hardware, PortLink, PortLinks};
    use weft_fabric::manager::FabricManager;
    use weft_fabric::pcie::config::msi::MsiMessage;
    use weft_fabric::pcie::tlp::Completion;
    use weft_fabric::pcie::Bdf;
    use weft_fabric::persist::{load, Flash, FlashError};
    use weft_fabric::settings::FabricSettings;
    use weft_proto::{LinkSpeed, LinkState, LinkStatus, Request};
    use weft_regs::tables::{
        AddressRoute, Destination, FunctionOwner, HostIndex, IdMapping, PortIndex, PortRole, Window,
    };

    /// The size of the manager's state on the soft core, read from the
    /// ELF by `cargo xtask fabric-size`.
    // Kept by name for the xtask: `no_mangle` is the only unsafe-code lint here.
    #[allow(unsafe_code)]
    #[no_mangle]
    #[used]
    pub static WEFT_FABRIC_MANAGER_BYTES: u32 = core::mem::size_of::<FabricManager>() as u32;

    /// Hardware whose every answer the optimizer cannot predict.
    struct Opaque;

    impl FabricConfig for Opaque {
        fn read(&mut self, port: PortIndex, target: Bdf, offset: u16) -> Result<u32, ConfigFault> {
            black_box((port, target, offset));
            black_box(Ok(0))
        }

        fn write(
            &mut self,
            port: PortIndex,
            target: Bdf,
            offset: u16,
            value: u32,
            byte_enables: u8,
        ) -> Result<(), ConfigFault> {
            black_box((port, target, offset, value, byte_enables));
            black_box(Ok(()))
        }

        fn read_below(
            &mut self,
            port: PortIndex,
            target: Bdf,
            offset: u16,
        ) -> Result<u32, ConfigFault> {
            FabricConfig::read(self, port, target, offset)
        }

        fn write_below(
            &mut self,
            port: PortIndex,
            target: Bdf,
            offset: u16,
            value: u32,
            byte_enables: u8,
        ) -> Result<(), ConfigFault> {
            FabricConfig::write(self, port, target, offset, value, byte_enables)
        }

        fn read_routed(
            &mut self,
            via: PortIndex,
            target: Bdf,
            offset: u16,
        ) -> Result<u32, ConfigFault> {
            FabricConfig::read(self, via, target, offset)
        }

        fn write_routed(
            &mut self,
            via: PortIndex,
            target: Bdf,
            offset: u16,
            value: u32,
            byte_enables: u8,
        ) -> Result<(), ConfigFault> {
            FabricConfig::write(self, via, target, offset, value, byte_enables)
        }
    }

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

    /// Every entry point of the manager, over [`Opaque`] hardware.
    // The linker's default entry symbol.
    #[allow(unsafe_code)]
    #[no_mangle]
    pub extern "C" fn _start() -> ! {
        let mut hw = Opaque;
        let (mut config, mut timer, mut plane, mut hosts, mut links, mut flash) =
            (Opaque, Opaque, Opaque, Opaque, Opaque, Opaque);
        let settings = black_box(FabricSettings::default());
        let Ok(mut manager) = FabricManager::new(settings) else {
            halt()
        };
        let _ = black_box(manager.start(&mut config, &mut timer, &mut plane, 0));
        if let Ok(Some(stored)) = load(&mut flash) {
            let _ = black_box(manager.restore(&stored, &mut plane, &mut hosts));
        }
        let board = BoardInfo {
            board: "probe",
            version: (0, 1, 0),
            build: "",
            ports: 8,
            authenticated: false,
        };
        loop {
            let _ = black_box(manager.service(&mut config, &mut plane, &mut hosts));
            let function = black_box(Bdf::default());
            let _ = black_box(manager.bind(function, HostIndex(0), 0, &mut plane, &mut hosts));
            let mode = black_box(UnbindMode::Graceful);
            let _ = black_box(manager.unbind(function, mode, &mut plane, &mut hosts));
            let request = black_box(Request::Ping);
            let hardware = Hardware {
                fabric: &mut plane,
                hosts: &mut hosts,
                links: &mut links,
            };
            let _ = black_box(handle(&mut manager, &board, &request, &[], hardware));
            let _ = black_box(manager.save_config(&mut flash));
            black_box(&mut hw);
        }
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
