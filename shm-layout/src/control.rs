//! The control plane: small descriptors and wake-ups between stages over iceoryx2.
//!
//! For each completed state that a stage claims from (Free, Synthesized, Prepped, Proved)
//! there is one publish-subscribe service carrying [`SlotDescriptor`]s and one event
//! service that wakes the waiting consumers. Every consumer of a stage sees every
//! descriptor; they race with one CAS and the losers go back to waiting.
//!
//! Descriptors are hints: the slot words in the arena are the truth. A receiver that finds
//! no usable descriptor scans the arena before it sleeps, so a descriptor dropped by a full
//! buffer, or a slot put back by recovery, is never lost.

use std::cell::Cell;
use std::time::{Duration, Instant};

use iceoryx2::node::{NodeState, NodeView};
use iceoryx2::port::listener::Listener;
use iceoryx2::port::notifier::Notifier;
use iceoryx2::port::publisher::Publisher;
use iceoryx2::port::subscriber::Subscriber;
use iceoryx2::prelude::*;

use crate::arena::Arena;
use crate::descriptor::SlotDescriptor;
use crate::error::ShmError;
use crate::slot::SlotClaim;
use crate::slot_state::{SlotState, Stage};

type DescriptorService = iceoryx2::service::port_factory::publish_subscribe::PortFactory<
    ipc::Service,
    SlotDescriptor,
    (),
>;
type WakeService = iceoryx2::service::port_factory::event::PortFactory<ipc::Service>;

/// Upper bounds every participant agrees on (open_or_create checks them).
const MAX_PORTS: usize = 32;
/// Descriptors buffered per subscriber; the oldest are dropped beyond it (safe overflow),
/// which only costs a scan.
const SUBSCRIBER_BUFFER: usize = 256;

/// iceoryx2 settings for one cuzk instance. `prefix` keeps instances (and test runs) apart:
/// it prefixes every file iceoryx2 creates.
pub fn iceoryx_config(prefix: &str) -> Result<Config, ShmError> {
    // iceoryx2 logs the stale resources it cleans up after a crash (expected here: the
    // supervisor recovers dead stages on purpose) as warnings; errors still show.
    // IOX2_LOG_LEVEL overrides.
    iceoryx2::prelude::set_log_level_from_env_or(iceoryx2::prelude::LogLevel::Error);
    let mut config = Config::default();
    config.global.prefix =
        FileName::new(prefix.as_bytes()).map_err(|e| ShmError::control("prefix", e))?;
    Ok(config)
}

/// One process's iceoryx2 node, scoped to one arena.
#[derive(Debug)]
pub struct ControlPlane {
    node: Node<ipc::Service>,
    arena_name: String,
}

impl ControlPlane {
    pub fn new(arena_name: &str, config: &Config) -> Result<Self, ShmError> {
        let name = format!("cuzk-{arena_name}-{}", std::process::id());
        let node = NodeBuilder::new()
            .name(&NodeName::new(&name).map_err(|e| ShmError::control("node name", e))?)
            .config(config)
            // Stages handle their own signals (SIGTERM drains); iceoryx2 must not.
            .signal_handling_mode(SignalHandlingMode::Disabled)
            .create::<ipc::Service>()
            .map_err(|e| ShmError::control("create node", e))?;
        Ok(Self {
            node,
            arena_name: arena_name.to_owned(),
        })
    }

    fn service_name(&self, state: SlotState, suffix: &str) -> Result<ServiceName, ShmError> {
        ServiceName::new(&format!("cuzk/{}/{:?}{suffix}", self.arena_name, state))
            .map_err(|e| ShmError::control("service name", e))
    }

    /// The descriptor and wake-up services of one completed state.
    fn ports(&self, state: SlotState) -> Result<(DescriptorService, WakeService), ShmError> {
        let data = self
            .node
            .service_builder(&self.service_name(state, "")?)
            .publish_subscribe::<SlotDescriptor>()
            .max_publishers(MAX_PORTS)
            .max_subscribers(MAX_PORTS)
            .subscriber_max_buffer_size(SUBSCRIBER_BUFFER)
            .history_size(0)
            .enable_safe_overflow(true)
            .open_or_create()
            .map_err(|e| ShmError::control("open descriptor service", e))?;
        let wake = self
            .node
            .service_builder(&self.service_name(state, "/wake")?)
            .event()
            .max_notifiers(MAX_PORTS)
            .max_listeners(MAX_PORTS)
            .open_or_create()
            .map_err(|e| ShmError::control("open wake-up service", e))?;
        Ok((data, wake))
    }

    /// A sender that announces slots which reached the completed state `state`.
    pub fn sender(&self, state: SlotState) -> Result<StageSender, ShmError> {
        let (data, wake) = self.ports(state)?;
        Ok(StageSender {
            publisher: data
                .publisher_builder()
                .create()
                .map_err(|e| ShmError::control("create publisher", e))?,
            notifier: wake
                .notifier_builder()
                .create()
                .map_err(|e| ShmError::control("create notifier", e))?,
            state,
        })
    }

    /// A receiver for the slots `stage` claims.
    pub fn receiver(&self, stage: Stage) -> Result<StageReceiver, ShmError> {
        let (data, wake) = self.ports(stage.ready_state())?;
        Ok(StageReceiver {
            subscriber: data
                .subscriber_builder()
                .buffer_size(SUBSCRIBER_BUFFER)
                .create()
                .map_err(|e| ShmError::control("create subscriber", e))?,
            listener: wake
                .listener_builder()
                .create()
                .map_err(|e| ShmError::control("create listener", e))?,
            stage,
            stats: ReceiverStats::default(),
        })
    }
}

/// Removes the iceoryx2 resources (node files, port registrations) of dead processes.
/// With `pid`, only nodes of that process; returns how many nodes were cleaned.
pub fn reap_dead_nodes(config: &Config, pid: Option<u32>) -> Result<u32, ShmError> {
    let mut cleaned = 0;
    Node::<ipc::Service>::list(config, |state| {
        if let NodeState::Dead(view) = state {
            let owner = view
                .details()
                .as_ref()
                .map(|d| d.process_id().value() as u32);
            if (pid.is_none() || owner == pid) && view.try_remove_stale_resources().is_ok() {
                cleaned += 1;
            }
        }
        CallbackProgression::Continue
    })
    .map_err(|e| ShmError::control("list nodes", e))?;
    Ok(cleaned)
}

/// Announces slots to the stage that claims them next.
#[derive(Debug)]
pub struct StageSender {
    publisher: Publisher<ipc::Service, SlotDescriptor, ()>,
    notifier: Notifier<ipc::Service>,
    state: SlotState,
}

impl StageSender {
    /// Publishes the descriptor (stamped with the send time) and wakes the consumers.
    pub fn announce(&self, descriptor: SlotDescriptor) -> Result<(), ShmError> {
        debug_assert_eq!(descriptor.state(), Some(self.state));
        let sample = self
            .publisher
            .loan_uninit()
            .map_err(|e| ShmError::control("loan descriptor", e))?;
        sample
            .write_payload(descriptor.stamped())
            .send()
            .map_err(|e| ShmError::control("send descriptor", e))?;
        self.notifier
            .notify()
            .map_err(|e| ShmError::control("notify", e))?;
        Ok(())
    }
}

/// Why a claim happened, and how many descriptors were passed over on the way.
#[derive(Debug, Default, Clone)]
pub struct ReceiverStats {
    pub via_descriptor: Cell<u64>,
    pub via_scan: Cell<u64>,
    /// Descriptors whose (state, generation) no longer matched the slot: another consumer
    /// claimed it first, or the descriptor was stale (e.g. from before a recovery). Ignored.
    pub passed_over: Cell<u64>,
}

/// A claimed slot and the descriptor that led to it (`None` when found by a scan).
#[derive(Debug)]
pub struct Handoff<'a> {
    pub claim: SlotClaim<'a>,
    pub descriptor: Option<SlotDescriptor>,
}

/// Waits for and claims slots ready for one stage.
#[derive(Debug)]
pub struct StageReceiver {
    subscriber: Subscriber<ipc::Service, SlotDescriptor, ()>,
    listener: Listener<ipc::Service>,
    stage: Stage,
    pub stats: ReceiverStats,
}

impl StageReceiver {
    /// Claims the next slot for this stage, waiting up to `timeout`. `Ok(None)` on timeout.
    /// For `Stage::Synthesis` this is the producer's backpressure: it waits for a free slot
    /// and allocates nothing meanwhile.
    pub fn claim_next<'a>(
        &self,
        arena: &'a Arena,
        timeout: Duration,
    ) -> Result<Option<Handoff<'a>>, ShmError> {
        let deadline = Instant::now() + timeout;
        let ready = self.stage.ready_state();
        loop {
            while let Some(sample) = self
                .subscriber
                .receive()
                .map_err(|e| ShmError::control("receive descriptor", e))?
            {
                let d = *sample;
                if d.state() != Some(ready) || d.slot >= arena.slot_count() {
                    continue;
                }
                match arena.try_claim(d.slot, ready, Some(d.generation)) {
                    Ok(claim) => {
                        bump(&self.stats.via_descriptor);
                        return Ok(Some(Handoff {
                            claim,
                            descriptor: Some(d),
                        }));
                    }
                    Err(_) => bump(&self.stats.passed_over),
                }
            }
            if let Some(claim) = arena.claim_any(self.stage) {
                bump(&self.stats.via_scan);
                return Ok(Some(Handoff {
                    claim,
                    descriptor: None,
                }));
            }
            let now = Instant::now();
            if now >= deadline {
                return Ok(None);
            }
            // A notification sent after the drain above is still pending here, so there is
            // no lost wake-up between draining and sleeping.
            self.listener
                .timed_wait(|_| {}, deadline - now)
                .map_err(|e| ShmError::control("wait for wake-up", e))?;
        }
    }
}

fn bump(c: &Cell<u64>) {
    c.set(c.get() + 1);
}
