//! [`WaitSet`]: blocks a thread until one of its conditions triggers.

use std::sync::Arc;
use std::time::{Duration, Instant};

use super::Condition;
use crate::error::Error;
use crate::runtime::notify::Signal;

/// Waits for any of its attached conditions to trigger. Conditions of several participants
/// may be mixed. The wait wakes as soon as something that may change a trigger value
/// happens (data or an event processed by a runtime, a read or take, a guard condition set),
/// then evaluates the conditions again; it never polls.
#[derive(Debug, Default)]
pub struct WaitSet {
    signal: Arc<Signal>,
    conditions: Vec<Condition>,
}

impl WaitSet {
    /// An empty WaitSet.
    pub fn new() -> WaitSet {
        WaitSet::default()
    }

    /// Attaches a condition; attaching one already attached does nothing.
    pub fn attach_condition(&mut self, condition: impl Into<Condition>) -> Result<(), Error> {
        let c = condition.into();
        if self.conditions.contains(&c) {
            return Ok(());
        }
        c.observers().add(&self.signal, c.interest());
        self.conditions.push(c);
        Ok(())
    }

    /// Detaches a condition (DDS PRECONDITION_NOT_MET if it is not attached).
    pub fn detach_condition(&mut self, condition: impl Into<Condition>) -> Result<(), Error> {
        let c = condition.into();
        let Some(i) = self.conditions.iter().position(|a| *a == c) else {
            return Err(Error::PreconditionNotMet("the condition is not attached"));
        };
        let c = self.conditions.remove(i);
        c.observers().remove(&self.signal, c.interest());
        Ok(())
    }

    /// The attached conditions.
    pub fn get_conditions(&self) -> &[Condition] {
        &self.conditions
    }

    /// Blocks until at least one attached condition is triggered and returns the triggered
    /// ones, or fails with [`Error::Timeout`] once `timeout` passed (`Duration::MAX`: wait
    /// without limit). Returns at once if one is triggered already.
    pub fn wait(&self, timeout: Duration) -> Result<Vec<Condition>, Error> {
        let deadline = Instant::now().checked_add(timeout);
        loop {
            // Read the generation first: a change after it is never missed.
            let seen = self.signal.generation();
            let triggered: Vec<Condition> = self
                .conditions
                .iter()
                .filter(|c| c.trigger_value())
                .cloned()
                .collect();
            if !triggered.is_empty() {
                return Ok(triggered);
            }
            if deadline.is_some_and(|d| Instant::now() >= d) {
                return Err(Error::Timeout);
            }
            self.signal.wait_past(seen, deadline);
        }
    }
}

impl Drop for WaitSet {
    fn drop(&mut self) {
        for c in &self.conditions {
            c.observers().remove(&self.signal, c.interest());
        }
    }
}
