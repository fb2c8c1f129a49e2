//! The status lines shape_main prints from its participant listener; the suite matches
//! `on_publication_matched()`, `on_offered_incompatible_qos`,
//! `on_requested_incompatible_qos()`, `on_offered_deadline_missed()` and
//! `on_requested_deadline_missed()` in them.

use tachyon::status::{
    DeadlineMissedStatus, IncompatibleQosStatus, LivelinessChangedStatus, LivelinessLostStatus,
    PublicationMatchedStatus, SubscriptionMatchedStatus,
};
use tachyon::{DataReader, DataReaderListener, DataWriter, DataWriterListener};

use super::types::ShapeType;

/// Prints the statuses of one writer or reader of topic `topic`.
pub struct Printer {
    pub topic: String,
}

impl Printer {
    fn head(&self, what: &str) -> String {
        format!("{what}() topic: '{}'  type: 'ShapeType'", self.topic)
    }

    fn incompatible(&self, what: &str, status: &IncompatibleQosStatus) {
        let (id, name) = status
            .last_policy_id
            .map_or((0, "UNKNOWN"), |p| (p.id(), p.name()));
        println!("{} : {id} ({name})", self.head(what));
    }

    fn deadline(&self, what: &str, status: &DeadlineMissedStatus) {
        println!(
            "{} : (total = {}, change = {})",
            self.head(what),
            status.total_count,
            status.total_count_change
        );
    }
}

impl DataWriterListener<ShapeType> for Printer {
    fn on_publication_matched(&self, _: &DataWriter<ShapeType>, s: PublicationMatchedStatus) {
        println!(
            "{} : matched readers {} (change = {})",
            self.head("on_publication_matched"),
            s.current_count,
            s.current_count_change
        );
    }

    fn on_offered_incompatible_qos(&self, _: &DataWriter<ShapeType>, s: IncompatibleQosStatus) {
        self.incompatible("on_offered_incompatible_qos", &s);
    }

    fn on_liveliness_lost(&self, _: &DataWriter<ShapeType>, s: LivelinessLostStatus) {
        println!(
            "{} : (total = {}, change = {})",
            self.head("on_liveliness_lost"),
            s.total_count,
            s.total_count_change
        );
    }

    fn on_offered_deadline_missed(&self, _: &DataWriter<ShapeType>, s: DeadlineMissedStatus) {
        self.deadline("on_offered_deadline_missed", &s);
    }
}

impl DataReaderListener<ShapeType> for Printer {
    fn on_subscription_matched(&self, _: &DataReader<ShapeType>, s: SubscriptionMatchedStatus) {
        println!(
            "{} : matched writers {} (change = {})",
            self.head("on_subscription_matched"),
            s.current_count,
            s.current_count_change
        );
    }

    fn on_requested_incompatible_qos(&self, _: &DataReader<ShapeType>, s: IncompatibleQosStatus) {
        self.incompatible("on_requested_incompatible_qos", &s);
    }

    fn on_liveliness_changed(&self, _: &DataReader<ShapeType>, s: LivelinessChangedStatus) {
        println!(
            "{} : (alive = {}, not_alive = {})",
            self.head("on_liveliness_changed"),
            s.alive_count,
            s.not_alive_count
        );
    }

    fn on_requested_deadline_missed(&self, _: &DataReader<ShapeType>, s: DeadlineMissedStatus) {
        self.deadline("on_requested_deadline_missed", &s);
    }
}
