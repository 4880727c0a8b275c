//! [`DesyncReport`]: what differs between two peers when a confirmed tick's checksums disagree,
//! down to the field, found by a bounded exchange between the two.
//!
//! The crate compares the checksums of confirmed ticks every `desync_interval` ticks; the session
//! keeps a snapshot of each such tick as it saves it (the last [`HELD_DETAILS`] of them), so when
//! a checksum differs both peers still hold that tick's state without running anything again, and
//! describe it as a [`StateDetail`] then (describing every checked tick as it ran would cost
//! several ticks' time each). Then, over the session's own socket (datagrams of
//! [`super::detail_wire`]):
//!
//! 1. each peer sends its **summary** of the tick: every simulation entity's hash by `SimId`, every
//!    simulation resource's hash, the GPU hash (no fields);
//! 2. from the two summaries each peer finds the same first difference (the first entity in
//!    `SimId` order, else the first resource, else the GPU state) and sends its **target**: that
//!    entity or resource with all its fields;
//! 3. from the two targets each peer names the component and field with both values, reports it
//!    ([`super::NetEvent::DesyncNamed`]) and sends **done**.
//!
//! Every message is sent [`PARTS_PER_SEND`] parts at a time, the next ones every [`RESEND_EVERY`]
//! (wrapping round), until the peer shows it arrived (its target shows it holds our summary, its
//! done that it holds our target), so loss only delays the report; a target too large to send
//! goes without its fields, naming the component only;
//! an exchange the peer does not finish within [`GIVE_UP_AFTER`] is reported as unanswered. Only a
//! peer's first desync is investigated: once two states part, every later tick differs too, and
//! the first is the one that names the cause.
//!
//! Peers are untrusted: a message is at most [`super::detail_wire::MAX_DETAIL_PARTS`] bounded
//! parts, only the peer under investigation is listened to, only about the tick under
//! investigation, and a part that is impossible or contradicts the parts held is refused and
//! counted against the peer like any refused datagram.
//!
//! This module owns the investigations. It must never touch the world: the session describes the
//! held snapshot when an investigation asks for it ([`Investigations::wanted`]), and the exchange
//! works on that detail alone.

use std::collections::BTreeMap;
use std::fmt;
use std::net::SocketAddr;
use std::time::{Duration, Instant};

use crate::record::detail::entity_label;
use crate::record::{DetailDifference, MAX_LISTED_DIFFERENCES, StateDetail, compare_details};

use super::detail_wire::{
    Assembly, DetailKind, decode_part, detail_json, encode_message, parse_detail,
};

/// Checked ticks whose snapshot the session keeps for an investigation.
pub const HELD_DETAILS: usize = 32;

/// How often an unanswered message is sent again.
pub const RESEND_EVERY: Duration = Duration::from_millis(200);

/// The most parts of a message sent at once: a whole 128-part message in one burst would overflow
/// a receiving socket's default buffer, losing the same tail parts at every resend.
pub const PARTS_PER_SEND: usize = 16;

/// How long an exchange may take before it is reported as unanswered.
pub const GIVE_UP_AFTER: Duration = Duration::from_secs(10);

/// What two peers found when a confirmed tick's checksums disagreed: the first entity in `SimId`
/// order that differs (else resource, else the GPU state), its first differing component and
/// field, and the value on each side.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct DesyncReport {
    /// The tick: the state after this many ticks differs.
    pub tick: u64,
    /// The peer whose state differs from this machine's.
    pub peer: SocketAddr,
    /// The differing entity's simulation id.
    pub sim_id: Option<u64>,
    /// The differing entity as people read it: its `Name` and scene or simulation id.
    pub entity: Option<String>,
    /// The differing component (or, when no entity differs, resource).
    pub component: Option<String>,
    /// The differing field's path inside it, e.g. `translation.x`.
    pub field: Option<String>,
    /// The value here (`(absent)` where only the peer has it).
    pub local: Option<String>,
    /// The value on the peer.
    pub remote: Option<String>,
    /// The GPU tick whose state differs, when the CPU state agrees in every field.
    pub gpu_tick: Option<u64>,
    /// Why nothing (or nothing finer) could be named, when that is so.
    pub unnamed: Option<String>,
    /// Every difference the peers found, worded (here's value first), at most
    /// `MAX_LISTED_DIFFERENCES`.
    pub listed: Vec<String>,
    /// How many more differ past `listed`.
    pub unlisted: usize,
}

impl DesyncReport {
    fn unnamed(tick: u64, peer: SocketAddr, why: impl Into<String>) -> DesyncReport {
        DesyncReport {
            tick,
            peer,
            sim_id: None,
            entity: None,
            component: None,
            field: None,
            local: None,
            remote: None,
            gpu_tick: None,
            unnamed: Some(why.into()),
            listed: Vec::new(),
            unlisted: 0,
        }
    }

    fn from_difference(tick: u64, peer: SocketAddr, difference: &DetailDifference) -> Self {
        let mut report = DesyncReport::unnamed(tick, peer, "");
        report.unnamed = None;
        report.gpu_tick = difference.gpu_tick;
        if let Some(entity) = &difference.entity {
            report.sim_id = Some(entity.sim_id);
            report.entity = Some(entity_label(
                entity.name.as_deref(),
                entity.scene_id,
                entity.sim_id,
            ));
        }
        report.component = difference.component.clone();
        if let Some(field) = &difference.field {
            report.field = Some(field.path.clone());
            report.local = Some(field.first.clone());
            report.remote = Some(field.second.clone());
        }
        report.listed = difference.listed.iter().map(ToString::to_string).collect();
        report.unlisted = difference.unlisted;
        report
    }
}

impl fmt::Display for DesyncReport {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "desync after tick {} with {}: ", self.tick, self.peer)?;
        if let Some(why) = &self.unnamed {
            return f.write_str(why);
        }
        if let Some(gpu_tick) = self.gpu_tick {
            return write!(
                f,
                "the GPU physics state differs after GPU tick {gpu_tick} while the CPU state \
                 agrees in every field"
            );
        }
        match &self.entity {
            Some(entity) => write!(f, "entity {entity}")?,
            None => f.write_str("no entity differs")?,
        }
        match (&self.component, self.entity.is_some()) {
            (Some(component), true) => write!(f, ", component {component}")?,
            (Some(resource), false) => write!(f, ", resource {resource}")?,
            (None, _) => f.write_str(", which only one of the peers has")?,
        }
        if let (Some(field), Some(local), Some(remote)) = (&self.field, &self.local, &self.remote) {
            write!(f, ", field {field}: {local} here, {remote} on the peer")?;
        }
        crate::record::detail::write_listing(
            f,
            &self.listed,
            self.unlisted,
            "; this machine's value first",
        )
    }
}

/// One exchange with one peer about one tick.
struct Investigation {
    tick: u64,
    started: Instant,
    last_sent: Option<Instant>,
    /// This machine's full detail of the tick.
    local: StateDetail,
    summary: Vec<Vec<u8>>,
    /// The summary's next part to send.
    summary_cursor: usize,
    /// Our target and its datagrams, once the peer's summary has come.
    target: Option<(StateDetail, Vec<Vec<u8>>)>,
    /// The target's next part to send.
    target_cursor: usize,
    remote_summary: Assembly,
    remote_target: Assembly,
    reported: bool,
    peer_done: bool,
    send_done: bool,
}

/// The exchanges under way, and the ones waiting for this machine's detail (see the module docs).
#[derive(Default)]
pub struct Investigations {
    /// Peers whose exchange waits for this machine's detail of a tick.
    wanted: BTreeMap<SocketAddr, u64>,
    active: BTreeMap<SocketAddr, Investigation>,
    /// Peers already investigated, with the tick, so a late resend of theirs is still answered.
    finished: BTreeMap<SocketAddr, u64>,
    /// Datagrams to send at the next step that belong to no exchange under way.
    pending: Vec<(SocketAddr, Vec<u8>)>,
}

/// What one step of the investigations produced.
#[derive(Default)]
pub struct InvestigationStep {
    /// Datagrams to send.
    pub outgoing: Vec<(SocketAddr, Vec<u8>)>,
    /// Reports made.
    pub reports: Vec<DesyncReport>,
    /// Peers whose completed message was not a state detail of the tick (their exchange ends).
    pub refused: Vec<SocketAddr>,
}

/// A detail datagram the peer should not have sent.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Refused;

impl Investigations {
    /// Whether an exchange is under way.
    pub fn active(&self) -> bool {
        !self.active.is_empty()
    }

    /// Asks for an investigation of a desync of `tick` with `peer` (the first with each peer
    /// only): it starts once the session gives this machine's detail of the tick.
    pub fn want(&mut self, tick: u64, peer: SocketAddr) {
        if !self.active.contains_key(&peer) && !self.finished.contains_key(&peer) {
            self.wanted.entry(peer).or_insert(tick);
        }
    }

    /// The `(peer, tick)` of every investigation waiting for this machine's detail.
    pub fn wanted(&self) -> Vec<(SocketAddr, u64)> {
        self.wanted
            .iter()
            .map(|(&peer, &tick)| (peer, tick))
            .collect()
    }

    /// Starts the investigation of `tick` with `peer` on this machine's detail of the tick, or
    /// reports at once why there is none (its snapshot is no longer held, say) or why it cannot go
    /// on.
    pub fn start(
        &mut self,
        tick: u64,
        peer: SocketAddr,
        now: Instant,
        local: Result<StateDetail, String>,
    ) -> Option<DesyncReport> {
        self.wanted.remove(&peer);
        if self.active.contains_key(&peer) || self.finished.contains_key(&peer) {
            return None;
        }
        let local = match local {
            Ok(local) => local,
            Err(why) => {
                self.finished.insert(peer, tick);
                return Some(DesyncReport::unnamed(tick, peer, why));
            }
        };
        let Some(summary) =
            encode_message(DetailKind::Summary, tick, &detail_json(&summary(&local)))
        else {
            self.finished.insert(peer, tick);
            return Some(DesyncReport::unnamed(
                tick,
                peer,
                format!(
                    "the state of tick {tick} ({} entities) is too large to compare over the \
                     network",
                    local.entities.len()
                ),
            ));
        };
        self.active.insert(
            peer,
            Investigation {
                tick,
                started: now,
                last_sent: None,
                local,
                summary,
                summary_cursor: 0,
                target: None,
                target_cursor: 0,
                remote_summary: Assembly::default(),
                remote_target: Assembly::default(),
                reported: false,
                peer_done: false,
                send_done: false,
            },
        );
        None
    }

    /// Takes in a detail datagram from `peer`. A summary from a peer not yet investigated asks
    /// for an investigation of its tick (it saw the desync first; it sends the summary again
    /// until this machine answers).
    pub fn receive(&mut self, peer: SocketAddr, datagram: &[u8]) -> Result<(), Refused> {
        let part = decode_part(datagram).ok_or(Refused)?;
        if !self.active.contains_key(&peer) {
            match self.finished.get(&peer) {
                // Our done went missing: say it again.
                Some(&tick) if tick == part.tick && part.kind == DetailKind::Target => {
                    let done = encode_message(DetailKind::Done, tick, &[]).unwrap_or_default();
                    self.pending
                        .extend(done.into_iter().map(|datagram| (peer, datagram)));
                }
                Some(_) => {}
                None if part.kind == DetailKind::Summary => self.want(part.tick, peer),
                None => {}
            }
            return Ok(());
        }
        let Some(investigation) = self.active.get_mut(&peer) else {
            return Ok(());
        };
        if part.tick != investigation.tick {
            return Ok(());
        }
        let added = match part.kind {
            DetailKind::Summary => investigation.remote_summary.add(&part),
            DetailKind::Target => {
                investigation.send_done |= investigation.reported;
                investigation.remote_target.add(&part)
            }
            DetailKind::Done => {
                investigation.peer_done = true;
                Ok(())
            }
        };
        added.map_err(|_| Refused)
    }

    /// Moves every exchange on: names what differs once both messages of the peer are in, sends
    /// what is due, and gives up on exchanges past [`GIVE_UP_AFTER`].
    pub fn exchange(&mut self, now: Instant) -> InvestigationStep {
        let mut step = InvestigationStep {
            outgoing: std::mem::take(&mut self.pending),
            ..InvestigationStep::default()
        };
        let mut over = Vec::new();
        for (&peer, investigation) in &mut self.active {
            match investigation.proceed(peer, now, &mut step) {
                Ok(true) => over.push(peer),
                Ok(false) => {}
                Err(Refused) => {
                    step.refused.push(peer);
                    over.push(peer);
                }
            }
        }
        for peer in over {
            if let Some(investigation) = self.active.remove(&peer) {
                self.finished.insert(peer, investigation.tick);
            }
        }
        step
    }
}

impl Investigation {
    /// One step of the exchange with `peer`; whether it is over.
    fn proceed(
        &mut self,
        peer: SocketAddr,
        now: Instant,
        step: &mut InvestigationStep,
    ) -> Result<bool, Refused> {
        if self.target.is_none()
            && let Some(json) = self.remote_summary.complete()
        {
            let remote = parse_detail(&json, self.tick).ok_or(Refused)?;
            let mut local = target(&self.local, &remote);
            let datagrams =
                match encode_message(DetailKind::Target, self.tick, &detail_json(&local)) {
                    Some(datagrams) => datagrams,
                    // Too many fields to send: the component hashes still name the component.
                    None => {
                        for entity in &mut local.entities {
                            for component in &mut entity.components {
                                component.fields.clear();
                            }
                        }
                        for resource in &mut local.resources {
                            resource.fields.clear();
                        }
                        encode_message(DetailKind::Target, self.tick, &detail_json(&local))
                            .unwrap_or_default()
                    }
                };
            self.target = Some((local, datagrams));
        }
        if !self.reported
            && let Some((local, _)) = &self.target
            && let Some(json) = self.remote_target.complete()
        {
            let remote = parse_detail(&json, self.tick).ok_or(Refused)?;
            step.reports.push(match compare_details(local, &remote) {
                Some(difference) => DesyncReport::from_difference(self.tick, peer, &difference),
                None => DesyncReport::unnamed(
                    self.tick,
                    peer,
                    "the two states agree in every field the peers compared (the checksums \
                     differ in state the detail does not hold)",
                ),
            });
            self.reported = true;
            self.send_done = true;
        }
        if self.send_done {
            self.send_done = false;
            for datagram in encode_message(DetailKind::Done, self.tick, &[]).unwrap_or_default() {
                step.outgoing.push((peer, datagram));
            }
        }
        if self.reported && self.peer_done {
            return Ok(true);
        }
        if now.duration_since(self.started) >= GIVE_UP_AFTER {
            if !self.reported {
                step.reports.push(DesyncReport::unnamed(
                    self.tick,
                    peer,
                    format!(
                        "the peer did not finish the detail exchange within {} s",
                        GIVE_UP_AFTER.as_secs()
                    ),
                ));
            }
            return Ok(true);
        }
        if self
            .last_sent
            .is_none_or(|sent| now.duration_since(sent) >= RESEND_EVERY)
        {
            self.last_sent = Some(now);
            // Until the peer's target comes, it may lack our summary; until its done comes, our
            // target.
            if self.remote_target.complete().is_none() {
                send_window(&self.summary, &mut self.summary_cursor, peer, step);
            }
            if let Some((_, target)) = self.target.as_ref().filter(|_| !self.peer_done) {
                send_window(target, &mut self.target_cursor, peer, step);
            }
        }
        Ok(false)
    }
}

/// Queues the next [`PARTS_PER_SEND`] of `datagrams` from `cursor` on (wrapping), and moves the
/// cursor past them.
fn send_window(
    datagrams: &[Vec<u8>],
    cursor: &mut usize,
    peer: SocketAddr,
    step: &mut InvestigationStep,
) {
    if datagrams.is_empty() {
        return;
    }
    for k in 0..PARTS_PER_SEND.min(datagrams.len()) {
        let datagram = &datagrams[(*cursor + k) % datagrams.len()];
        step.outgoing.push((peer, datagram.clone()));
    }
    *cursor = (*cursor + PARTS_PER_SEND) % datagrams.len();
}

/// A detail without fields: each entity's and resource's hash only.
fn summary(detail: &StateDetail) -> StateDetail {
    let mut summary = detail.clone();
    for entity in &mut summary.entities {
        entity.components.clear();
    }
    for resource in &mut summary.resources {
        resource.fields.clear();
    }
    summary
}

/// The part of `detail` that differs from the peer's summary `remote`: every entity whose hash
/// differs or that one side lacks (the first [`MAX_LISTED_DIFFERENCES`] in `SimId` order) with
/// all its fields, every resource whose hash differs, and the GPU hash when nothing else differs;
/// nothing when the two agree.
fn target(detail: &StateDetail, remote: &StateDetail) -> StateDetail {
    let mut target = StateDetail {
        tick: detail.tick,
        entities: Vec::new(),
        resources: Vec::new(),
        gpu: None,
    };
    let theirs = |sim_id: u64| remote.entities.iter().find(|e| e.sim_id == sim_id);
    target.entities = detail
        .entities
        .iter()
        .filter(|held| theirs(held.sim_id).is_none_or(|e| e.hash != held.hash))
        .take(MAX_LISTED_DIFFERENCES)
        .cloned()
        .collect();
    target.resources = detail
        .resources
        .iter()
        .filter(|held| {
            remote
                .resources
                .iter()
                .find(|r| r.name == held.name)
                .is_none_or(|r| r.hash != held.hash)
        })
        .cloned()
        .collect();
    let only_theirs = remote
        .entities
        .iter()
        .any(|e| !detail.entities.iter().any(|held| held.sim_id == e.sim_id));
    if target.entities.is_empty() && target.resources.is_empty() && !only_theirs {
        target.gpu = detail.gpu.clone();
    }
    target
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::record::EntityDetail;

    /// A detail of `entities` entities, each hashing `salt`.
    fn detail(entities: u64, salt: u64) -> StateDetail {
        StateDetail {
            tick: 40,
            entities: (0..entities)
                .map(|sim_id| EntityDetail {
                    sim_id,
                    name: Some(format!("Crate {sim_id}")),
                    scene_id: None,
                    hash: format!("{:016x}", sim_id ^ salt),
                    components: Vec::new(),
                })
                .collect(),
            resources: Vec::new(),
            gpu: None,
        }
    }

    /// A summary of many parts goes out at most `PARTS_PER_SEND` parts per resend, every part in
    /// turn. Fails if a resend sends the whole message at once (a receiving socket's buffer then
    /// drops the same tail parts every time).
    #[test]
    fn a_large_summary_goes_out_a_window_at_a_time() {
        let peer: SocketAddr = "127.0.0.1:7001".parse().unwrap();
        let mut investigations = Investigations::default();
        investigations.want(40, peer);
        assert_eq!(investigations.wanted(), [(peer, 40)]);
        let start = Instant::now();
        assert_eq!(
            investigations.start(40, peer, start, Ok(detail(1200, 0))),
            None
        );
        let mut seen = std::collections::BTreeSet::new();
        let mut parts = 0;
        for k in 0..20u32 {
            let step = investigations.exchange(start + RESEND_EVERY * k);
            assert!(
                step.outgoing.len() <= PARTS_PER_SEND,
                "{}",
                step.outgoing.len()
            );
            for (_, datagram) in &step.outgoing {
                let part = decode_part(datagram).unwrap();
                parts = usize::from(part.parts);
                seen.insert(part.part);
            }
        }
        assert!(parts > PARTS_PER_SEND, "only {parts} parts");
        assert_eq!(seen.len(), parts);
    }

    /// A desync whose tick is no longer described is reported at once, unnamed, with the reason.
    #[test]
    fn a_desync_without_a_detail_is_reported_unnamed() {
        let peer: SocketAddr = "127.0.0.1:7001".parse().unwrap();
        let mut investigations = Investigations::default();
        let report = investigations
            .start(40, peer, Instant::now(), Err("no snapshot".to_owned()))
            .unwrap();
        assert_eq!(report.unnamed.as_deref(), Some("no snapshot"));
        assert!(!investigations.active());
    }
}
