//! The XML report (`<name>.viz`, seed §3.9), written with quick-xml.
//!
//! The schema is this crate's own (PeekPerf's is not public): one
//! `<HpmReport>` with `<Rusage>`, `<Notice>` and `<Section>` elements; each
//! section has `<Inclusive>` and optionally `<Exclusive>` measurements with
//! `<Set>`, `<Group>`, `<Counter>` and `<Metric>` elements.

use std::io;

use quick_xml::Writer;
use quick_xml::events::{BytesDecl, BytesText, Event};

use crate::metrics::compute_metrics;
use crate::output::ascii::RenderOptions;
use crate::report::{ExitInfo, Measurement, Report};

/// Renders reports as XML.
#[derive(Clone, Debug, Default)]
pub struct VizWriter {
    /// Rendering options (formulas are always included as attributes).
    pub options: RenderOptions,
}

fn num(v: f64) -> String {
    if v.is_finite() {
        format!("{v}")
    } else {
        "NaN".to_string()
    }
}

impl VizWriter {
    /// A writer with `options`.
    pub fn new(options: RenderOptions) -> VizWriter {
        VizWriter { options }
    }

    /// The XML document.
    pub fn render(&self, r: &Report) -> String {
        let mut w = Writer::new_with_indent(Vec::new(), b' ', 2);
        // Writing into a Vec cannot fail.
        let _ = self.write(&mut w, r);
        String::from_utf8_lossy(&w.into_inner()).into_owned() + "\n"
    }

    fn write(&self, w: &mut Writer<Vec<u8>>, r: &Report) -> io::Result<()> {
        w.write_event(Event::Decl(BytesDecl::new("1.0", Some("UTF-8"), None)))?;
        let pid = r.pid.to_string();
        let rank = r.rank.map(|x| x.to_string()).unwrap_or_default();
        let wall = num(r.wall_s);
        let started = r.started.iso();
        let errors = r.error_count.to_string();
        let mut attrs: Vec<(&str, &str)> = vec![
            ("tool", r.tool.name()),
            ("version", env!("CARGO_PKG_VERSION")),
            ("program", &r.program),
            ("host", &r.host),
            ("pid", &pid),
            ("rank", &rank),
            ("started", &started),
            ("wall_s", &wall),
            ("backend", &r.backend),
            (
                "user_space_only",
                if r.user_space_only { "true" } else { "false" },
            ),
            ("error_count", &errors),
        ];
        let exit = match r.exit {
            Some(ExitInfo::Code(c)) => format!("code:{c}"),
            Some(ExitInfo::Signal(s)) => format!("signal:{s}"),
            None => String::new(),
        };
        if !exit.is_empty() {
            attrs.push(("exit", &exit));
        }
        if let Some(a) = &r.aggregate {
            attrs.push(("aggregate", a));
        }
        w.create_element("HpmReport")
            .with_attributes(attrs)
            .write_inner_content(|w| {
                for n in &r.notices {
                    w.create_element("Notice")
                        .write_text_content(BytesText::new(n))?;
                }
                if let Some(ru) = &r.rusage {
                    w.create_element("Rusage").write_inner_content(|w| {
                        for (k, v) in ru.to_fields() {
                            w.create_element("Field")
                                .with_attributes([("name", k), ("value", &num(v))])
                                .write_empty()?;
                        }
                        Ok(())
                    })?;
                }
                for s in &r.sections {
                    let id = s.id.to_string();
                    let parent = s.parent.map(|p| p.to_string()).unwrap_or_default();
                    let tid = s.tid.to_string();
                    let calls = s.calls.to_string();
                    let overhead = num(s.overhead_s);
                    w.create_element("Section")
                        .with_attributes([
                            ("id", id.as_str()),
                            ("label", &s.label),
                            ("parent", &parent),
                            ("tid", &tid),
                            ("calls", &calls),
                            ("overhead_s", &overhead),
                            (
                                "overhead_warning",
                                if s.overhead_warning() {
                                    "true"
                                } else {
                                    "false"
                                },
                            ),
                        ])
                        .write_inner_content(|w| {
                            self.measurement(w, "Inclusive", &s.inclusive)?;
                            if let Some(ex) = &s.exclusive {
                                self.measurement(w, "Exclusive", ex)?;
                            }
                            Ok(())
                        })?;
                }
                Ok(())
            })?;
        Ok(())
    }

    fn measurement(&self, w: &mut Writer<Vec<u8>>, tag: &str, m: &Measurement) -> io::Result<()> {
        let wall = num(m.wall_s);
        let user = m.user_s.map(num).unwrap_or_default();
        w.create_element(tag)
            .with_attributes([("wall_s", wall.as_str()), ("user_s", &user)])
            .write_inner_content(|w| {
                for set in &m.sets {
                    w.create_element("Set")
                        .with_attribute(("name", set.name.as_str()))
                        .write_inner_content(|w| {
                            for g in &set.groups {
                                let en = g.enabled_ns.to_string();
                                let run = g.running_ns.to_string();
                                w.create_element("Group")
                                    .with_attributes([
                                        ("enabled_ns", en.as_str()),
                                        ("running_ns", &run),
                                    ])
                                    .write_inner_content(|w| {
                                        for c in &g.counters {
                                            let raw = c.raw.to_string();
                                            let v = c.value.map(num).unwrap_or_default();
                                            w.create_element("Counter")
                                                .with_attributes([
                                                    ("name", c.name.as_str()),
                                                    ("value", &v),
                                                    ("raw", &raw),
                                                ])
                                                .write_empty()?;
                                        }
                                        Ok(())
                                    })?;
                            }
                            for d in compute_metrics(&m.metric_input(set), &self.options.metrics) {
                                w.create_element("Metric")
                                    .with_attributes([
                                        ("name", d.name),
                                        ("value", &num(d.value)),
                                        ("unit", d.unit),
                                        ("formula", &d.formula),
                                    ])
                                    .write_empty()?;
                            }
                            Ok(())
                        })?;
                }
                Ok(())
            })?;
        Ok(())
    }
}
