//! What discovery knows at one moment, with what each vendor says about its participants'
//! hosts and processes in its property list.

use tachyon::builtin::{
    ParticipantBuiltinTopicData, PublicationBuiltinTopicData, SubscriptionBuiltinTopicData,
};
use tachyon::DomainParticipant;
use tachyon_wire::{Guid, GuidPrefix};

/// The remote participants, writers and readers, each list sorted by GUID.
pub struct Snapshot {
    pub participants: Vec<Participant>,
    pub writers: Vec<PublicationBuiltinTopicData>,
    pub readers: Vec<SubscriptionBuiltinTopicData>,
}

/// A remote participant and where it runs.
pub struct Participant {
    pub data: ParticipantBuiltinTopicData,
    pub host: Option<String>,
    pub process: Option<String>,
    pub pid: Option<u32>,
}

impl Snapshot {
    pub fn take(p: &DomainParticipant) -> Snapshot {
        let mut participants: Vec<Participant> = p
            .discovered_participants()
            .into_iter()
            .map(Participant::new)
            .collect();
        participants.sort_by_key(|p| p.data.key.0.prefix.0);
        let mut writers = p.discovered_publications();
        writers.sort_by_key(|w| guid_order(w.key.0));
        let mut readers = p.discovered_subscriptions();
        readers.sort_by_key(|r| guid_order(r.key.0));
        Snapshot {
            participants,
            writers,
            readers,
        }
    }

    /// The participant with this GUID prefix, if discovered.
    pub fn participant(&self, prefix: GuidPrefix) -> Option<&Participant> {
        self.participants
            .iter()
            .find(|p| p.data.key.0.prefix == prefix)
    }

    /// `prefix`'s vendor and release, or `?` when the participant itself is unknown.
    pub fn vendor_of(&self, prefix: GuidPrefix) -> String {
        self.participant(prefix)
            .map_or_else(|| "?".to_owned(), Participant::vendor)
    }
}

fn guid_order(g: Guid) -> ([u8; 12], u32) {
    (g.prefix.0, g.entity_id.to_u32())
}

impl Participant {
    fn new(data: ParticipantBuiltinTopicData) -> Participant {
        let prop = |names: &[&str]| {
            data.properties
                .iter()
                .find(|(k, _)| names.contains(&k.as_str()))
                .map(|(_, v)| v.clone())
        };
        // Cyclone DDS and Tachyon: __Hostname, __ProcessName, __Pid. Fast DDS:
        // fastdds.physical_data.host ("name:machine-id"), .process (its pid).
        let host = prop(&["__Hostname"]).or_else(|| {
            prop(&["fastdds.physical_data.host"])
                .map(|h| h.split(':').next().unwrap_or_default().to_owned())
        });
        let process = prop(&["__ProcessName"]);
        let pid = prop(&["__Pid", "fastdds.physical_data.process"]).and_then(|p| p.parse().ok());
        Participant {
            data,
            host,
            process,
            pid,
        }
    }

    /// "Cyclone DDS 0.10.2", "Fast DDS", or the vendor id in hex for a vendor without a name.
    pub fn vendor(&self) -> String {
        let v = self.data.vendor_id;
        let name = v.name().map_or_else(
            || format!("vendor {:02x}{:02x}", v.0[0], v.0[1]),
            str::to_owned,
        );
        match self.data.product_version {
            Some(r) => format!("{name} {r}"),
            None => name,
        }
    }

    /// "name (pid)", what is known of it, or "?".
    pub fn process_label(&self) -> String {
        match (&self.process, self.pid) {
            (Some(n), Some(p)) => format!("{n} ({p})"),
            (Some(n), None) => n.clone(),
            (None, Some(p)) => format!("pid {p}"),
            (None, None) => "?".to_owned(),
        }
    }
}
