//! The command line of the OMG interoperability suite's `shape_main` (dds-rtps,
//! `srcCxx/shape_main.cxx`), parsed as its `getopt_long` does: the same short options
//! (`hPSbrRwc:d:D:f:k:p:s:x:t:v:z:`), the same long ones (with `--name value`,
//! `--name=value` and unambiguous prefixes), the same defaults, warnings and errors, so the
//! suite's command lines mean the same thing to `tachyon shape`.

use std::fmt::Write as _;
use std::time::Duration;

/// DURABILITY kind asked with `-D`.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Durability {
    /// `v`
    Volatile,
    /// `l`
    TransientLocal,
    /// `t`
    Transient,
    /// `p`
    Persistent,
}

/// PRESENTATION access scope asked with `--access-scope`.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Scope {
    /// `i`
    Instance,
    /// `t`
    Topic,
    /// `g`
    Group,
}

/// What to do with the instances when the publisher finishes (`--final-instance-state`).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum FinalState {
    /// Nothing (the writer's deletion unregisters them).
    Unspecified,
    /// `u`: unregister (with `autodispose_unregistered_instances` off).
    Unregister,
    /// `d`: dispose.
    Dispose,
}

/// Every option of `shape_main`, with its defaults.
#[derive(Clone, Debug)]
pub struct ShapeOptions {
    pub debug: bool,
    pub publish: bool,
    pub subscribe: bool,
    pub domain_id: u32,
    pub reliable: bool,
    pub durability: Durability,
    /// 1 (XCDR, the default) or 2 (XCDR2).
    pub data_representation: u8,
    /// -1: the default (KEEP_LAST 1); 0: KEEP_ALL; n: KEEP_LAST n.
    pub history_depth: i32,
    /// -1: SHARED ownership; otherwise EXCLUSIVE with this strength.
    pub ownership_strength: i32,
    pub topic_name: Option<String>,
    pub color: Option<String>,
    pub partition: Option<String>,
    pub time_filter: Duration,
    pub deadline: Duration,
    pub lifespan: Duration,
    pub shapesize: i32,
    pub print_writer_samples: bool,
    pub use_read: bool,
    pub write_period: Duration,
    pub read_period: Duration,
    /// 0: run until interrupted.
    pub num_iterations: u32,
    pub num_instances: u32,
    pub num_topics: u32,
    pub final_state: FinalState,
    pub access_scope: Scope,
    pub access_scope_set: bool,
    pub coherent: bool,
    pub ordered: bool,
    pub coherent_sample_count: u32,
    pub additional_payload_size: u32,
    /// `take_next_instance`/`read_next_instance` (the default) rather than `take`/`read`.
    pub take_read_next_instance: bool,
    pub periodic_announcement: Duration,
    pub datafrag_size: u32,
    pub cft_expression: Option<String>,
    pub size_modulo: i32,
}

impl Default for ShapeOptions {
    fn default() -> ShapeOptions {
        ShapeOptions {
            debug: false,
            publish: false,
            subscribe: false,
            domain_id: 0,
            reliable: true,
            durability: Durability::Volatile,
            data_representation: 1,
            history_depth: -1,
            ownership_strength: -1,
            topic_name: None,
            color: None,
            partition: None,
            time_filter: Duration::ZERO,
            deadline: Duration::ZERO,
            lifespan: Duration::ZERO,
            shapesize: 20,
            print_writer_samples: false,
            use_read: false,
            write_period: Duration::from_millis(33),
            read_period: Duration::from_millis(100),
            num_iterations: 0,
            num_instances: 1,
            num_topics: 1,
            final_state: FinalState::Unspecified,
            access_scope: Scope::Instance,
            access_scope_set: false,
            coherent: false,
            ordered: false,
            coherent_sample_count: 0,
            additional_payload_size: 0,
            take_read_next_instance: true,
            periodic_announcement: Duration::ZERO,
            datafrag_size: 0,
            cft_expression: None,
            size_modulo: 0,
        }
    }
}

/// The outcome of parsing: options to run with, or the usage to print and exit with 0
/// (`-h`) or 1 (an error, already reported on the messages).
pub enum Parsed {
    Run(Box<ShapeOptions>),
    Help,
    Invalid,
}

/// Long options: name, whether it takes an argument, and the short letter
/// `shape_main.cxx` maps it to.
const LONG: &[(&str, bool, char)] = &[
    ("help", false, 'h'),
    ("write-period", true, 'W'),
    ("read-period", true, 'A'),
    ("final-instance-state", true, 'M'),
    ("access-scope", true, 'C'),
    ("coherent", false, 'T'),
    ("ordered", false, 'O'),
    ("coherent-sample-count", true, 'H'),
    ("additional-payload-size", true, 'B'),
    ("num-topics", true, 'E'),
    ("lifespan", true, 'l'),
    ("num-instances", true, 'I'),
    ("num-iterations", true, 'n'),
    ("take-read", false, 'K'),
    ("time-filter", true, 'i'),
    ("periodic-announcement", true, 'N'),
    ("datafrag-size", true, 'Z'),
    ("cft", true, 'F'),
    ("size-modulo", true, 'Q'),
];

/// Short options that take an argument (`getopt`'s `x:`).
const SHORT_WITH_ARG: &str = "cdDfkpsxtvz";
/// Short options without one.
const SHORT_FLAGS: &str = "hPSbrRw";

/// `sscanf("%d")`: the leading integer of `s` (after blanks), or `None` when there is none.
fn scan_int(s: &str) -> Option<i64> {
    let t = s.trim_start();
    let (neg, digits) = match t.as_bytes().first() {
        Some(b'-') => (true, &t[1..]),
        Some(b'+') => (false, &t[1..]),
        _ => (false, t),
    };
    let end = digits.bytes().take_while(u8::is_ascii_digit).count();
    if end == 0 {
        return None;
    }
    let v: i64 = digits[..end].parse().ok()?;
    Some(if neg { -v } else { v })
}

/// Splits `args` (without the program name) into `(letter, argument)` pairs as
/// `getopt_long` would; unknown options and missing arguments are reported on `err`.
fn getopt(args: &[String], err: &mut Vec<String>) -> Vec<(char, Option<String>)> {
    let mut out = Vec::new();
    let mut i = 0;
    while i < args.len() {
        let a = &args[i];
        i += 1;
        if a == "--" {
            break;
        }
        if let Some(long) = a.strip_prefix("--") {
            let (name, inline) = match long.split_once('=') {
                Some((n, v)) => (n, Some(v.to_owned())),
                None => (long, None),
            };
            let exact = LONG.iter().find(|(n, _, _)| *n == name);
            let candidates: Vec<_> = LONG
                .iter()
                .filter(|(n, _, _)| n.starts_with(name))
                .collect();
            let found = match (exact, candidates.as_slice()) {
                (Some(e), _) => Some(e),
                (None, [one]) => Some(*one),
                (None, []) => {
                    err.push(format!("unrecognized option '--{name}'"));
                    None
                }
                (None, _) => {
                    err.push(format!("option '--{name}' is ambiguous"));
                    None
                }
            };
            let Some(&(full, takes, letter)) = found else {
                out.push(('?', None));
                continue;
            };
            if takes {
                let value = inline.or_else(|| {
                    let v = args.get(i).cloned();
                    if v.is_some() {
                        i += 1;
                    }
                    v
                });
                match value {
                    Some(v) => out.push((letter, Some(v))),
                    None => {
                        err.push(format!("option '--{full}' requires an argument"));
                        out.push(('?', None));
                    }
                }
            } else if inline.is_some() {
                err.push(format!("option '--{full}' doesn't allow an argument"));
                out.push(('?', None));
            } else {
                out.push((letter, None));
            }
        } else if a.len() > 1 && a.starts_with('-') {
            for (pos, c) in a[1..].char_indices() {
                if SHORT_FLAGS.contains(c) {
                    out.push((c, None));
                } else if SHORT_WITH_ARG.contains(c) {
                    let rest = &a[1 + pos + c.len_utf8()..];
                    let value = if !rest.is_empty() {
                        Some(rest.to_owned())
                    } else {
                        let v = args.get(i).cloned();
                        if v.is_some() {
                            i += 1;
                        }
                        v
                    };
                    match value {
                        Some(v) => out.push((c, Some(v))),
                        None => {
                            err.push(format!("option requires an argument -- '{c}'"));
                            out.push(('?', None));
                        }
                    }
                    break;
                } else {
                    err.push(format!("invalid option -- '{c}'"));
                    out.push(('?', None));
                }
            }
        }
        // Anything else is an operand, which shape_main ignores.
    }
    out
}

fn ms(v: i64) -> Duration {
    Duration::from_millis(u64::try_from(v).unwrap_or(0))
}

impl ShapeOptions {
    /// Parses `args` (without the program name). Errors and warnings go to `messages`,
    /// which the caller prints (shape_main prints them on standard output).
    pub fn parse(args: &[String], messages: &mut Vec<String>) -> Parsed {
        let mut o = ShapeOptions::default();
        let mut ok = true;
        let pairs = getopt(args, messages);
        for (letter, arg) in pairs {
            let arg = arg.unwrap_or_default();
            let first = arg.chars().next().unwrap_or('\0');
            // A numeric argument as shape_main's `sscanf("%d")` reads it, checked for a minimum.
            let mut number = |what: &str, min: i64, min_text: &str| -> Option<i64> {
                match scan_int(&arg) {
                    None => {
                        messages.push(format!("unrecognized value for {what} {first}"));
                        ok = false;
                        None
                    }
                    Some(v) if v < min => {
                        messages.push(format!("incorrect value for {what}{min_text} {v}"));
                        ok = false;
                        None
                    }
                    Some(v) => Some(v),
                }
            };
            match letter {
                'v' => match first {
                    'd' => o.debug = true,
                    'e' => o.debug = false,
                    _ => {
                        messages.push(format!("unrecognized value for verbosity {first}"));
                        ok = false;
                    }
                },
                'w' => o.print_writer_samples = true,
                'b' => o.reliable = false,
                'r' => o.reliable = true,
                'R' => o.use_read = true,
                'P' => o.publish = true,
                'S' => o.subscribe = true,
                'h' => return Parsed::Help,
                'K' => o.take_read_next_instance = false,
                'T' => o.coherent = true,
                'O' => o.ordered = true,
                'c' => o.color = Some(arg),
                'p' => o.partition = Some(arg),
                't' => o.topic_name = Some(arg),
                'F' => o.cft_expression = Some(arg),
                'd' => {
                    if let Some(v) = number("domain_id", 0, "") {
                        match u32::try_from(v) {
                            Ok(d) if d <= 232 => o.domain_id = d,
                            _ => {
                                messages.push(format!("incorrect value for domain_id {v}"));
                                ok = false;
                            }
                        }
                    }
                }
                'D' => match first {
                    'v' => o.durability = Durability::Volatile,
                    'l' => o.durability = Durability::TransientLocal,
                    't' => o.durability = Durability::Transient,
                    'p' => o.durability = Durability::Persistent,
                    _ => {
                        messages.push(format!("unrecognized value for durability {first}"));
                        ok = false;
                    }
                },
                'x' => match first {
                    '1' => o.data_representation = 1,
                    '2' => o.data_representation = 2,
                    _ => {
                        messages.push(format!(
                            "unrecognized value for data representation {first}"
                        ));
                        ok = false;
                    }
                },
                'i' => {
                    if let Some(v) = number("timebasedfilter_interval", 0, "") {
                        o.time_filter = ms(v);
                    }
                }
                'f' => {
                    if let Some(v) = number("deadline_interval", 0, "") {
                        o.deadline = ms(v);
                    }
                }
                'l' => {
                    if let Some(v) = number("lifespan", 0, "") {
                        o.lifespan = ms(v);
                    }
                }
                'W' => {
                    if let Some(v) = number("write-period", 0, "") {
                        o.write_period = ms(v);
                    }
                }
                'A' => {
                    if let Some(v) = number("read-period", 0, "") {
                        o.read_period = ms(v);
                    }
                }
                'N' => {
                    if let Some(v) = number("periodic-announcement", 0, ", it must be >=0") {
                        o.periodic_announcement = ms(v);
                    }
                }
                'k' => {
                    if let Some(v) = number("history_depth", 0, "") {
                        o.history_depth = i32::try_from(v).unwrap_or(i32::MAX);
                    }
                }
                's' => {
                    if let Some(v) = number("ownership_strength", -1, "") {
                        o.ownership_strength = i32::try_from(v).unwrap_or(i32::MAX);
                    }
                }
                'z' => {
                    if let Some(v) = number("shapesize", 0, "") {
                        o.shapesize = i32::try_from(v).unwrap_or(i32::MAX);
                    }
                }
                'n' => {
                    if let Some(v) = number("num-iterations", 1, ", it must be >=1") {
                        o.num_iterations = u32::try_from(v).unwrap_or(u32::MAX);
                    }
                }
                'I' => {
                    if let Some(v) = number("num-instances", 1, ", it must be >=1") {
                        o.num_instances = u32::try_from(v).unwrap_or(u32::MAX);
                    }
                }
                'E' => {
                    if let Some(v) = number("num-topics", 1, ", it must be >=1") {
                        o.num_topics = u32::try_from(v).unwrap_or(u32::MAX);
                    }
                }
                'B' => {
                    if let Some(v) = number("additional-payload-size", 1, ", it must be >=1") {
                        o.additional_payload_size = u32::try_from(v).unwrap_or(u32::MAX);
                    }
                }
                'H' => {
                    if let Some(v) = number("coherent-sample-count", 2, ", it must be >=2") {
                        o.coherent_sample_count = u32::try_from(v).unwrap_or(u32::MAX);
                    }
                }
                'Z' => {
                    if let Some(v) = number("datafrag-size", 0, "") {
                        if v > 65535 {
                            messages.push(format!(
                                "incorrect value for datafrag-size, it must be <= 65535 bytes{v}"
                            ));
                            ok = false;
                        } else {
                            o.datafrag_size = u32::try_from(v).unwrap_or(0);
                        }
                    }
                }
                'Q' => match scan_int(&arg) {
                    Some(v) if v >= 1 => o.size_modulo = i32::try_from(v).unwrap_or(i32::MAX),
                    _ => {
                        messages.push("incorrect value for size-modulo, must be >=1".to_owned());
                        ok = false;
                    }
                },
                'M' => match first {
                    'u' | 'd' => {
                        let wanted = if first == 'u' {
                            FinalState::Unregister
                        } else {
                            FinalState::Dispose
                        };
                        if o.final_state != FinalState::Unspecified && o.final_state != wanted {
                            messages.push(
                                "error, cannot configure unregister and dispose at the same time"
                                    .to_owned(),
                            );
                            ok = false;
                        }
                        o.final_state = wanted;
                    }
                    _ => {
                        messages.push(format!(
                            "unrecognized value for final-instance-state {first}"
                        ));
                        ok = false;
                    }
                },
                'C' => {
                    o.access_scope_set = true;
                    match first {
                        'i' => o.access_scope = Scope::Instance,
                        't' => o.access_scope = Scope::Topic,
                        'g' => o.access_scope = Scope::Group,
                        _ => {
                            messages.push(format!("unrecognized value for coherent-sets {first}"));
                            ok = false;
                            o.access_scope_set = false;
                        }
                    }
                }
                _ => ok = false,
            }
        }
        if ok {
            ok = o.validate(messages);
        }
        if ok {
            Parsed::Run(Box::new(o))
        } else {
            Parsed::Invalid
        }
    }

    /// shape_main's `validate()`: the same errors, warnings and defaults.
    fn validate(&mut self, m: &mut Vec<String>) -> bool {
        if self.topic_name.is_none() {
            m.push("please specify topic name [-t]".to_owned());
            return false;
        }
        if !self.publish && !self.subscribe {
            m.push("please specify publish [-P] or subscribe [-S]".to_owned());
            return false;
        }
        if self.publish && self.subscribe {
            m.push("please specify only one of: publish [-P] or subscribe [-S]".to_owned());
            return false;
        }
        let warn = |m: &mut Vec<String>, cond: bool, text: &str| {
            if cond {
                m.push(format!("warning: {text}"));
            }
        };
        if self.publish && self.color.is_none() {
            self.color = Some("BLUE".to_owned());
            m.push("warning: color was not specified, defaulting to \"BLUE\"".to_owned());
        }
        let p = self.publish;
        let s = self.subscribe;
        let oc = self.coherent || self.ordered;
        warn(
            m,
            p && !self.time_filter.is_zero(),
            "time base filter [--time-filter] ignored on publisher applications",
        );
        warn(
            m,
            p && self.use_read,
            "use read [-R] ignored on publisher applications",
        );
        warn(
            m,
            p && !self.take_read_next_instance,
            "--take-read ignored on publisher applications",
        );
        warn(
            m,
            p && self.cft_expression.is_some(),
            "--cft ignored on publisher applications",
        );
        warn(
            m,
            s && self.shapesize != 20,
            "shapesize [-z] ignored on subscriber applications",
        );
        warn(
            m,
            s && !self.lifespan.is_zero(),
            "--lifespan ignored on subscriber applications",
        );
        warn(
            m,
            s && self.num_instances > 1,
            "--num-instances ignored on subscriber applications",
        );
        warn(
            m,
            s && self.final_state != FinalState::Unspecified,
            "--final-instance-state ignored on subscriber applications",
        );
        warn(
            m,
            s && self.coherent_sample_count > 0,
            "--coherent-sample-count ignored on subscriber applications",
        );
        warn(
            m,
            !oc && self.coherent_sample_count > 0,
            "--coherent-sample-count ignored because not coherent, or ordered access enabled",
        );
        warn(
            m,
            s && self.additional_payload_size > 0,
            "--additional-payload-size ignored on subscriber applications",
        );
        warn(
            m,
            !oc && self.access_scope_set,
            "--access-scope set but not coherent, or ordered access enabled",
        );
        warn(
            m,
            self.size_modulo > 0 && self.shapesize != 0,
            "--size-modulo has no effect unless shapesize (-z) is set to 0",
        );
        if s && self.color.is_some() && self.cft_expression.is_some() {
            m.push(
                "error: cannot specify both --cft and -c for subscriber applications".to_owned(),
            );
            return false;
        }
        true
    }

    /// The options as shape_main prints them with `-v d`.
    pub fn describe(&self) -> String {
        let mut s = String::from("Shape Options: ");
        let reading = match (self.use_read, self.take_read_next_instance) {
            (true, true) => "read_next_instance",
            (true, false) => "read",
            (false, true) => "take_next_instance",
            (false, false) => "take",
        };
        let _ = write!(
            s,
            "\n    This application is a {}\n    DomainId = {}\n    ReliabilityKind = {}\
             \n    DurabilityKind = {:?}\n    DataRepresentation = XCDR{}\n    HistoryDepth = {}\
             \n    OwnershipStrength = {}\n    TimeBasedFilterInterval = {}ms\
             \n    DeadlineInterval = {}ms\n    Shapesize = {}\n    Reading method = {reading}\
             \n    Write period = {}ms\n    Read period = {}ms\n    Lifespan = {}ms\
             \n    Number of iterations = {}\n    Number of instances = {}\
             \n    Number of entities = {}\n    Coherent sets = {}\n    Ordered access = {}\
             \n    Access Scope = {:?}\n    Coherent Sample Count = {}\
             \n    Additional Payload Size = {}\n    Final Instance State = {:?}\
             \n    Periodic Announcement Period = {}ms\n    Data Fragmentation Size = {} bytes",
            if self.publish {
                "publisher"
            } else {
                "subscriber"
            },
            self.domain_id,
            if self.reliable {
                "RELIABLE"
            } else {
                "BEST_EFFORT"
            },
            self.durability,
            self.data_representation,
            self.history_depth,
            self.ownership_strength,
            self.time_filter.as_millis(),
            self.deadline.as_millis(),
            self.shapesize,
            self.write_period.as_millis(),
            self.read_period.as_millis(),
            self.lifespan.as_millis(),
            self.num_iterations,
            self.num_instances,
            self.num_topics,
            self.coherent,
            self.ordered,
            self.access_scope,
            self.coherent_sample_count,
            self.additional_payload_size,
            self.final_state,
            self.periodic_announcement.as_millis(),
            self.datafrag_size,
        );
        if let Some(t) = &self.topic_name {
            let _ = write!(s, "\n    Topic = {t}");
        }
        if let Some(c) = &self.color {
            let _ = write!(s, "\n    Color = {c}");
        }
        if let Some(p) = &self.partition {
            let _ = write!(s, "\n    Partition = {p}");
        }
        s
    }
}

/// shape_main's usage text.
pub fn usage(prog: &str) -> String {
    format!(
        "{prog}: 
   --help, -h      : print this menu
   -v [e|d]        : set log message verbosity [e: ERROR, d: DEBUG]
   -P              : publish samples
   -S              : subscribe samples
   -d <int>        : domain id (default: 0)
   -b              : BEST_EFFORT reliability
   -r              : RELIABLE reliability
   -k <depth>      : keep history depth [0: KEEP_ALL]
   -f <interval>   : set a 'deadline' with interval (ms) [0: OFF]
   -s <strength>   : set ownership strength [-1: SHARED]
   -t <topic_name> : set the topic name
   -c <color>      : set color to publish (filter if subscriber)
   -p <partition>  : set a 'partition' string
   -D [v|l|t|p]    : set durability [v: VOLATILE,  l: TRANSIENT_LOCAL]
                                     t: TRANSIENT, p: PERSISTENT]
   -x [1|2]        : set data representation [1: XCDR, 2: XCDR2]
   -w              : print Publisher's samples
   -z <int>        : set shapesize (0: increase the size for every sample)
   -R              : use 'read()' instead of 'take()'
   --write-period <ms>: waiting period between 'write()' operations in ms.
                        Default: 33ms
   --read-period <ms> : waiting period between 'read()' or 'take()' operations
                        in ms. Default: 100ms
   --time-filter <interval> : apply 'time based filter' with interval 
                              in ms [0: OFF]
   --lifespan <int>      : indicates the lifespan of a sample in ms
   --num-iterations <int>: indicates the number of iterations of the main loop
                           After that, the application will exit.
                           Default: infinite
   --num-instances <int>: indicates the number of instances a DataWriter writes
                          If the value is > 1, the additional instances are
                          created by appending a number. For example, if the
                          original color is \"BLUE\" the instances used are
                          \"BLUE\", \"BLUE1\", \"BLUE2\"...
   --num-topics <int>: indicates the number of topics created (using the same
                       type). This also creates a DataReader or DataWriter per
                       topic. If the value is > 1, the additional topic names
                       are created by appending a number: For example, if the
                       original topic name is \"Square\", the topics created are
                       \"Square\", \"Square1\", \"Square2\"...
   --final-instance-state [u|d]: indicates the action performed after the
                                 DataWriter finishes its execution (before
                                 deleting it):
                                   - u: unregister
                                   - d: dispose
   --access-scope [i|t|g]: sets Presentation.access_scope to INSTANCE, TOPIC
                           or GROUP
   --coherent            : sets Presentation.coherent_access = true
   --ordered             : sets Presentation.ordered_access = true
   --coherent-sample-count <int>: amount of samples sent for each DataWriter
                                  and instance that are grouped in a coherent
                                  set
   --additional-payload-size <bytes>: indicates the amount of bytes added to
                                      the samples written (for example to use
                                      large data)
   --take-read           : uses take()/read() instead of take_next_instance()
                           read_next_instance()
   --periodic-announcement <ms> : indicates the periodic participant
                                  announcement period in ms. Default 0 (off)
   --datafrag-size <bytes> : set the data fragment size (default: 0, means
                           not set)
   --cft <expression> : ContentFilteredTopic filter expression (quotes
                       required around the expression). Cannot be used with
                        -c on subscriber applications
   --size-modulo <int> : If set, the modulo operation is applied to the
                         shapesize. This will make that shapesize is in the
                         range [1,N]. This only applies if shapesize is
                         increased (-z 0)
"
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    fn parse(line: &str) -> (Option<ShapeOptions>, Vec<String>) {
        let args: Vec<String> = line.split_whitespace().map(str::to_owned).collect();
        let mut m = Vec::new();
        match ShapeOptions::parse(&args, &mut m) {
            Parsed::Run(o) => (Some(*o), m),
            _ => (None, m),
        }
    }

    #[test]
    fn suite_lines_parse() {
        let (o, m) = parse("-P -t Square -s -1 -r -k 0 -c BLUE -z 20");
        let o = o.expect("valid");
        assert!(o.publish && o.reliable);
        assert_eq!(o.ownership_strength, -1);
        assert_eq!(o.history_depth, 0);
        assert_eq!(o.color.as_deref(), Some("BLUE"));
        assert!(m.is_empty(), "{m:?}");

        let (o, _) = parse(
            "-P -t Square -r -k 0 --coherent --access-scope g --num-topics 3 --num-instances 4 \
             --coherent-sample-count 3 --write-period 100 -z 0",
        );
        let o = o.expect("valid");
        assert!(o.coherent);
        assert_eq!(o.access_scope, Scope::Group);
        assert_eq!(
            (o.num_topics, o.num_instances, o.coherent_sample_count),
            (3, 4, 3)
        );
        assert_eq!(o.write_period, Duration::from_millis(100));
        assert_eq!(o.shapesize, 0);

        let (o, m) = parse("-P -t Square");
        assert_eq!(o.expect("valid").color.as_deref(), Some("BLUE"));
        assert_eq!(
            m,
            ["warning: color was not specified, defaulting to \"BLUE\""]
        );
    }

    #[test]
    fn getopt_forms() {
        let (o, _) = parse("-S -tCircle --read=250 -Dl --final-instance-state=d");
        let o = o.expect("valid");
        assert_eq!(o.topic_name.as_deref(), Some("Circle"));
        assert_eq!(o.read_period, Duration::from_millis(250));
        assert_eq!(o.durability, Durability::TransientLocal);
        assert_eq!(o.final_state, FinalState::Dispose);
    }

    #[test]
    fn errors_are_reported() {
        assert!(parse("-P").0.is_none());
        assert!(parse("-P -S -t Square").0.is_none());
        let (o, m) = parse("-S -t Square -k -3");
        assert!(o.is_none());
        assert_eq!(m, ["incorrect value for history_depth -3"]);
        let (o, m) = parse("-S -t Square --bogus");
        assert!(o.is_none());
        assert_eq!(m, ["unrecognized option '--bogus'"]);
        let (o, m) = parse("-S -t Square -c RED --cft x>1");
        assert!(o.is_none());
        assert!(m[0].contains("cannot specify both"));
        assert!(parse("-S -t Square --num-iterations 0").0.is_none());
        assert!(parse("-S -t Square --coherent-sample-count 1").0.is_none());
        assert!(parse("-S -t Square -x 3").0.is_none());
        assert!(parse("-S -t").0.is_none());
    }
}
