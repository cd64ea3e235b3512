//! Property tests: MCP types survive encode → decode unchanged, and encoding is stable
//! (encode → decode → encode gives the same JSON).

use std::fmt::Debug;

use ferromcp_types::mcp::*;
use proptest::prelude::*;
use serde::Serialize;
use serde::de::DeserializeOwned;
use serde_json::{Value, json};

fn check<T: Serialize + DeserializeOwned + PartialEq + Debug>(t: &T) -> Result<(), TestCaseError> {
    let v = serde_json::to_value(t).map_err(|e| TestCaseError::fail(e.to_string()))?;
    let text = serde_json::to_string(t).map_err(|e| TestCaseError::fail(e.to_string()))?;
    let back: T = serde_json::from_str(&text)
        .map_err(|e| TestCaseError::fail(format!("decode {text}: {e}")))?;
    prop_assert_eq!(&back, t);
    let v2 = serde_json::to_value(&back).map_err(|e| TestCaseError::fail(e.to_string()))?;
    prop_assert_eq!(v2, v);
    Ok(())
}

/// Numbers that survive a JSON round trip exactly (dyadic fractions and integers).
fn num() -> impl Strategy<Value = f64> {
    prop_oneof![
        (-1_000_000i64..1_000_000).prop_map(|i| i as f64),
        (-1_000_000i64..1_000_000).prop_map(|i| i as f64 / 64.0),
    ]
}

fn text() -> impl Strategy<Value = String> {
    prop_oneof!["[a-zA-Z0-9 _./:-]{0,12}", any::<String>()]
}

fn opt<T: Strategy>(s: T) -> impl Strategy<Value = Option<T::Value>> {
    proptest::option::of(s)
}

/// Arbitrary JSON without floats (integers, strings, bools, null, arrays, objects).
fn json_value() -> impl Strategy<Value = Value> {
    let leaf = prop_oneof![
        Just(Value::Null),
        any::<bool>().prop_map(Value::Bool),
        any::<i64>().prop_map(|i| json!(i)),
        text().prop_map(Value::String),
    ];
    leaf.prop_recursive(3, 24, 4, |inner| {
        prop_oneof![
            proptest::collection::vec(inner.clone(), 0..4).prop_map(Value::Array),
            proptest::collection::btree_map(text(), inner, 0..4)
                .prop_map(|m| Value::Object(m.into_iter().collect())),
        ]
    })
}

fn json_object() -> impl Strategy<Value = JsonObject> {
    proptest::collection::btree_map(text(), json_value(), 0..4)
        .prop_map(|m| m.into_iter().collect())
}

fn meta() -> impl Strategy<Value = Meta> {
    json_object().prop_map(Meta::from)
}

fn role() -> impl Strategy<Value = Role> {
    prop_oneof![Just(Role::User), Just(Role::Assistant)]
}

fn annotations() -> impl Strategy<Value = Annotations> {
    (
        opt(proptest::collection::vec(role(), 0..3)),
        opt(num()),
        opt(text()),
    )
        .prop_map(|(a, p, l)| {
            let mut x = Annotations::new();
            x.audience = a;
            x.priority = p;
            x.last_modified = l;
            x
        })
}

fn icon() -> impl Strategy<Value = Icon> {
    (
        text(),
        opt(text()),
        opt(proptest::collection::vec(text(), 0..3)),
        opt(prop_oneof![Just(IconTheme::Light), Just(IconTheme::Dark)]),
    )
        .prop_map(|(src, m, s, t)| {
            let mut i = Icon::new(src);
            i.mime_type = m;
            i.sizes = s;
            i.theme = t;
            i
        })
}

fn resource() -> impl Strategy<Value = Resource> {
    (
        (text(), text(), opt(text()), opt(text())),
        (
            opt(text()),
            opt(annotations()),
            opt(any::<u64>()),
            opt(proptest::collection::vec(icon(), 0..2)),
        ),
        opt(meta()),
    )
        .prop_map(
            |((uri, name, title, desc), (mime, ann, size, icons), meta)| {
                let mut r = Resource::new(uri, name);
                r.title = title;
                r.description = desc;
                r.mime_type = mime;
                r.annotations = ann;
                r.size = size;
                r.icons = icons;
                r.meta = meta;
                r
            },
        )
}

fn resource_contents() -> impl Strategy<Value = ResourceContents> {
    prop_oneof![
        (text(), text(), opt(text())).prop_map(|(u, t, m)| {
            let mut c = TextResourceContents::new(u, t);
            c.mime_type = m;
            ResourceContents::Text(c)
        }),
        (text(), "[A-Za-z0-9+/]{0,16}", opt(meta())).prop_map(|(u, b, m)| {
            let mut c = BlobResourceContents::new(u, b);
            c.meta = m;
            ResourceContents::Blob(c)
        }),
    ]
}

fn content_block() -> impl Strategy<Value = ContentBlock> {
    prop_oneof![
        (text(), opt(annotations()), opt(meta())).prop_map(|(t, a, m)| {
            let mut c = TextContent::new(t);
            c.annotations = a;
            c.meta = m;
            ContentBlock::Text(c)
        }),
        ("[A-Za-z0-9+/=]{0,16}", text(), opt(annotations())).prop_map(|(d, m, a)| {
            let mut c = MediaContent::new(d, m);
            c.annotations = a;
            ContentBlock::Image(c)
        }),
        ("[A-Za-z0-9+/=]{0,16}", text()).prop_map(|(d, m)| ContentBlock::audio(d, m)),
        resource().prop_map(ContentBlock::ResourceLink),
        (resource_contents(), opt(annotations())).prop_map(|(r, a)| {
            let mut e = EmbeddedResource::new(r);
            e.annotations = a;
            ContentBlock::Resource(e)
        }),
        ("x-[a-z]{1,8}", json_object()).prop_map(|(ty, mut m)| {
            m.insert("type".into(), Value::String(ty));
            ContentBlock::Unknown(m)
        }),
    ]
}

fn sampling_content() -> impl Strategy<Value = SamplingContent> {
    prop_oneof![
        text().prop_map(SamplingContent::text),
        (text(), text(), json_object())
            .prop_map(|(id, n, i)| { SamplingContent::ToolUse(ToolUseContent::new(id, n, i)) }),
        (
            text(),
            proptest::collection::vec(content_block(), 0..3),
            opt(json_value()),
            opt(any::<bool>())
        )
            .prop_map(|(id, c, s, e)| {
                let mut r = ToolResultContent::new(id, c);
                r.structured_content = s;
                r.is_error = e;
                SamplingContent::ToolResult(r)
            }),
    ]
}

fn sampling_message() -> impl Strategy<Value = SamplingMessage> {
    (
        role(),
        prop_oneof![
            sampling_content().prop_map(SamplingMessageContent::Single),
            proptest::collection::vec(sampling_content(), 0..3)
                .prop_map(SamplingMessageContent::Multiple),
        ],
    )
        .prop_map(|(r, c)| SamplingMessage::new(r, c))
}

fn tool() -> impl Strategy<Value = Tool> {
    (
        (
            text(),
            json_object(),
            opt(json_object()),
            opt(text()),
            opt(text()),
        ),
        (
            opt((
                opt(text()),
                opt(any::<bool>()),
                opt(any::<bool>()),
                opt(any::<bool>()),
                opt(any::<bool>()),
            )),
            opt(opt(prop_oneof![
                Just(TaskSupport::Forbidden),
                Just(TaskSupport::Optional),
                Just(TaskSupport::Required)
            ])),
            opt(proptest::collection::vec(icon(), 0..2)),
            opt(meta()),
        ),
    )
        .prop_map(
            |((name, input, output, title, desc), (ann, exec, icons, meta))| {
                let mut t = Tool::new(name, input);
                t.output_schema = output;
                t.title = title;
                t.description = desc;
                t.annotations = ann.map(|(title, ro, de, id, ow)| {
                    let mut a = ToolAnnotations::new();
                    a.title = title;
                    a.read_only_hint = ro;
                    a.destructive_hint = de;
                    a.idempotent_hint = id;
                    a.open_world_hint = ow;
                    a
                });
                t.execution = exec.map(|ts| {
                    let mut e = ToolExecution::new();
                    e.task_support = ts;
                    e
                });
                t.icons = icons;
                t.meta = meta;
                t
            },
        )
}

fn cap_map() -> impl Strategy<Value = CapabilityMap> {
    proptest::collection::btree_map(text(), json_object(), 0..3)
}

fn list_changed() -> impl Strategy<Value = ListChangedCapability> {
    opt(any::<bool>()).prop_map(|l| {
        let mut c = ListChangedCapability::new();
        c.list_changed = l;
        c
    })
}

fn tasks_capability() -> impl Strategy<Value = TasksCapability> {
    (
        opt(json_object()),
        opt(json_object()),
        opt((opt(json_object()), opt(json_object()), opt(json_object()))),
    )
        .prop_map(|(l, c, r)| {
            let mut t = TasksCapability::new();
            t.list = l;
            t.cancel = c;
            t.requests = r.map(|(s, e, tl)| {
                let mut q = TaskRequestsCapability::new();
                q.sampling = s.map(|o| {
                    let mut x = TaskSamplingRequests::new();
                    x.create_message = Some(o);
                    x
                });
                q.elicitation = e.map(|o| {
                    let mut x = TaskElicitationRequests::new();
                    x.create = Some(o);
                    x
                });
                q.tools = tl.map(|o| {
                    let mut x = TaskToolsRequests::new();
                    x.call = Some(o);
                    x
                });
                q
            });
            t
        })
}

fn client_capabilities() -> impl Strategy<Value = ClientCapabilities> {
    (
        opt(cap_map()),
        opt(list_changed()),
        opt((opt(json_object()), opt(json_object()))),
        opt((opt(json_object()), opt(json_object()))),
        opt(tasks_capability()),
        opt(cap_map()),
    )
        .prop_map(|(x, r, s, e, t, ext)| {
            let mut c = ClientCapabilities::new();
            c.experimental = x;
            c.roots = r;
            c.sampling = s.map(|(ctx, tools)| {
                let mut s = SamplingCapability::new();
                s.context = ctx;
                s.tools = tools;
                s
            });
            c.elicitation = e.map(|(f, u)| {
                let mut e = ElicitationCapability::new();
                e.form = f;
                e.url = u;
                e
            });
            c.tasks = t;
            c.extensions = ext;
            c
        })
}

fn server_capabilities() -> impl Strategy<Value = ServerCapabilities> {
    (
        (opt(cap_map()), opt(json_object()), opt(json_object())),
        (
            opt(list_changed()),
            opt((opt(any::<bool>()), opt(any::<bool>()))),
            opt(list_changed()),
        ),
        (opt(tasks_capability()), opt(cap_map())),
    )
        .prop_map(|((x, l, c), (p, r, t), (tasks, ext))| {
            let mut s = ServerCapabilities::new();
            s.experimental = x;
            s.logging = l;
            s.completions = c;
            s.prompts = p;
            s.resources = r.map(|(sub, lc)| {
                let mut r = ResourcesCapability::new();
                r.subscribe = sub;
                r.list_changed = lc;
                r
            });
            s.tools = t;
            s.tasks = tasks;
            s.extensions = ext;
            s
        })
}

fn logging_level() -> impl Strategy<Value = LoggingLevel> {
    proptest::sample::select(LoggingLevel::ALL.to_vec())
}

fn progress_token() -> impl Strategy<Value = ProgressToken> {
    prop_oneof![
        any::<i64>().prop_map(ProgressToken::Integer),
        text().prop_map(ProgressToken::String)
    ]
}

fn strings() -> impl Strategy<Value = Vec<String>> {
    proptest::collection::vec(text(), 0..4)
}

fn enum_options() -> impl Strategy<Value = Vec<EnumOption>> {
    proptest::collection::vec(
        (text(), text()).prop_map(|(v, t)| EnumOption::new(v, t)),
        0..4,
    )
}

fn primitive_schema() -> impl Strategy<Value = PrimitiveSchemaDefinition> {
    let td = || (opt(text()), opt(text()));
    prop_oneof![
        (
            td(),
            opt(any::<u64>()),
            opt(any::<u64>()),
            opt(prop_oneof![
                Just(StringFormat::Email),
                Just(StringFormat::Uri),
                Just(StringFormat::Date),
                Just(StringFormat::DateTime)
            ]),
            opt(text())
        )
            .prop_map(|((t, d), min, max, f, def)| {
                let mut s = StringSchema::new();
                (
                    s.title,
                    s.description,
                    s.min_length,
                    s.max_length,
                    s.format,
                    s.default,
                ) = (t, d, min, max, f, def);
                s.into()
            }),
        (
            td(),
            prop_oneof![Just(NumberType::Number), Just(NumberType::Integer)],
            opt(num()),
            opt(num()),
            opt(num())
        )
            .prop_map(|((t, d), k, min, max, def)| {
                let mut s = NumberSchema::new(k);
                (s.title, s.description, s.minimum, s.maximum, s.default) = (t, d, min, max, def);
                s.into()
            }),
        (td(), opt(any::<bool>())).prop_map(|((t, d), def)| {
            let mut s = BooleanSchema::new();
            (s.title, s.description, s.default) = (t, d, def);
            s.into()
        }),
        (td(), strings(), opt(text())).prop_map(|((t, d), v, def)| {
            let mut s = UntitledSingleSelectEnumSchema::new(v);
            (s.title, s.description, s.default) = (t, d, def);
            s.into()
        }),
        (td(), enum_options(), opt(text())).prop_map(|((t, d), o, def)| {
            let mut s = TitledSingleSelectEnumSchema::new(o);
            (s.title, s.description, s.default) = (t, d, def);
            s.into()
        }),
        (
            td(),
            strings(),
            opt(any::<u64>()),
            opt(any::<u64>()),
            opt(strings())
        )
            .prop_map(|((t, d), v, min, max, def)| {
                let mut s = UntitledMultiSelectEnumSchema::new(v);
                (s.title, s.description, s.min_items, s.max_items, s.default) =
                    (t, d, min, max, def);
                s.into()
            }),
        (
            td(),
            enum_options(),
            opt(any::<u64>()),
            opt(any::<u64>()),
            opt(strings())
        )
            .prop_map(|((t, d), o, min, max, def)| {
                let mut s = TitledMultiSelectEnumSchema::new(o);
                (s.title, s.description, s.min_items, s.max_items, s.default) =
                    (t, d, min, max, def);
                s.into()
            }),
        (td(), strings(), strings(), opt(text())).prop_map(|((t, d), v, n, def)| {
            let mut s = LegacyTitledEnumSchema::new(v, n);
            (s.title, s.description, s.default) = (t, d, def);
            s.into()
        }),
    ]
}

fn elicit_params() -> impl Strategy<Value = ElicitRequestParams> {
    prop_oneof![
        (
            text(),
            proptest::collection::btree_map(text(), primitive_schema(), 0..4),
            opt(strings()),
            any::<bool>()
        )
            .prop_map(|(m, props, req, explicit)| {
                let mut schema = ElicitationSchema::new();
                schema.properties = props;
                schema.required = req;
                let mut f = ElicitRequestFormParams::new(m, schema);
                if explicit {
                    f.mode = Some(ElicitationMode::Form);
                }
                f.into()
            }),
        (text(), text(), opt(text())).prop_map(|(m, u, id)| {
            let mut p = ElicitRequestUrlParams::new(m, u);
            p.elicitation_id = id;
            p.into()
        }),
    ]
}

fn elicit_value() -> impl Strategy<Value = ElicitValue> {
    prop_oneof![
        text().prop_map(ElicitValue::String),
        num().prop_map(ElicitValue::Number),
        any::<bool>().prop_map(ElicitValue::Boolean),
        strings().prop_map(ElicitValue::StringArray),
    ]
}

fn input_request() -> impl Strategy<Value = InputRequest> {
    prop_oneof![
        (
            proptest::collection::vec(sampling_message(), 0..3),
            any::<u32>(),
            opt(num())
        )
            .prop_map(|(m, max, temp)| {
                let mut p = CreateMessageRequestParams::new(m, u64::from(max));
                p.temperature = temp;
                InputRequest::CreateMessage(p)
            }),
        opt(opt(meta())).prop_map(|p| InputRequest::ListRoots(p.map(|m| {
            let mut r = RequestParams::new();
            r.meta = m;
            r
        }))),
        elicit_params().prop_map(InputRequest::Elicit),
    ]
}

fn input_response() -> impl Strategy<Value = InputResponse> {
    prop_oneof![
        (
            role(),
            sampling_content(),
            text(),
            opt(prop_oneof![
                Just(StopReason::EndTurn),
                Just(StopReason::ToolUse),
                "[a-z]{1,8}".prop_map(|s| StopReason::from(s.as_str())),
            ])
        )
            .prop_map(|(r, c, m, s)| {
                let mut x = CreateMessageResult::new(r, c, m);
                x.stop_reason = s;
                x.into()
            }),
        proptest::collection::vec((text(), opt(text())), 0..3).prop_map(|roots| {
            ListRootsResult::new(
                roots
                    .into_iter()
                    .map(|(u, n)| {
                        let mut r = Root::new(u);
                        r.name = n;
                        r
                    })
                    .collect(),
            )
            .into()
        }),
        (
            prop_oneof![
                Just(ElicitAction::Accept),
                Just(ElicitAction::Decline),
                Just(ElicitAction::Cancel)
            ],
            opt(proptest::collection::btree_map(
                text(),
                elicit_value(),
                0..4
            ))
        )
            .prop_map(|(a, c)| {
                let mut r = ElicitResult::new(a);
                r.content = c;
                r.into()
            }),
    ]
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(96))]

    // basic/content: every content block kind, including unknown future kinds.
    #[test]
    fn content_blocks(b in content_block()) { check(&b)?; }

    // client/sampling: single and multiple content, tool use and tool result blocks.
    #[test]
    fn sampling_messages(m in sampling_message()) { check(&m)?; }

    // server/tools: Tool with schemas kept verbatim, annotations, execution, icons, _meta.
    #[test]
    fn tools(t in tool()) { check(&t)?; }

    #[test]
    fn list_tools_results(tools in proptest::collection::vec(tool(), 0..3), c in opt(text()), ttl in opt(any::<u64>()), pub_ in any::<bool>()) {
        let mut r = ListToolsResult::new(tools);
        r.next_cursor = c;
        r.ttl_ms = ttl;
        r.cache_scope = Some(if pub_ { CacheScope::Public } else { CacheScope::Private });
        r.result_type = Some(ResultType::Complete);
        check(&r)?;
    }

    #[test]
    fn call_tool_results(c in proptest::collection::vec(content_block(), 0..4), s in opt(json_value()), e in opt(any::<bool>())) {
        let mut r = CallToolResult::new(c);
        r.structured_content = s;
        r.is_error = e;
        check(&r)?;
        check(&MaybeInputRequired::Complete(r))?;
    }

    // basic/lifecycle: capabilities of both sides with experimental/extensions maps.
    #[test]
    fn client_caps(c in client_capabilities()) { check(&c)?; }

    #[test]
    fn server_caps(c in server_capabilities()) { check(&c)?; }

    // server/utilities/logging: levels encode as their lowercase names.
    #[test]
    fn logging_levels(l in logging_level(), data in json_value(), logger in opt(text())) {
        check(&l)?;
        let mut p = LoggingMessageNotificationParams::new(l, data);
        p.logger = logger;
        check(&p)?;
    }

    // basic/utilities/progress: string or integer tokens, fractional progress.
    #[test]
    fn progress(t in progress_token(), p in num(), total in opt(num()), m in opt(text())) {
        check(&t)?;
        let mut n = ProgressNotificationParams::new(t, p);
        n.total = total;
        n.message = m;
        check(&n)?;
    }

    // client/elicitation: the restricted schema and both modes.
    #[test]
    fn elicitation_schemas(s in primitive_schema()) { check(&s)?; }

    #[test]
    fn elicitation_params(p in elicit_params()) { check(&p)?; }

    // 2026-07-28 multi-round requests.
    #[test]
    fn input_required_results(
        reqs in opt(proptest::collection::btree_map(text(), input_request(), 0..3)),
        state in opt(text()),
        m in opt(meta()),
    ) {
        let mut r = InputRequiredResult::new();
        r.input_requests = reqs;
        r.request_state = state;
        r.meta = m;
        check(&r)?;
        check(&MaybeInputRequired::<CallToolResult>::InputRequired(r))?;
    }

    #[test]
    fn input_responses(r in proptest::collection::btree_map(text(), input_response(), 0..3), state in opt(text())) {
        let mut p = CallToolRequestParams::new("t");
        p.input_responses = Some(r);
        p.request_state = state;
        check(&p)?;
    }

    // basic (_meta): arbitrary keys survive; reserved keys read back typed.
    #[test]
    fn meta_objects(m in meta(), v in "[0-9]{4}-[0-9]{2}-[0-9]{2}", l in logging_level()) {
        check(&m)?;
        let m = m.with_protocol_version(v.clone()).with_log_level(l);
        prop_assert_eq!(m.protocol_version(), Some(v.as_str()));
        prop_assert_eq!(m.log_level().unwrap().unwrap(), l);
        check(&m)?;
    }

    // 2025-11-25 tasks.
    #[test]
    fn tasks(id in text(), st in proptest::sample::select(vec![
        TaskStatus::Working, TaskStatus::InputRequired, TaskStatus::Completed, TaskStatus::Failed, TaskStatus::Cancelled,
    ]), ttl in opt(any::<u64>()), poll in opt(any::<u64>()), msg in opt(text())) {
        let mut t = Task::new(id, st, "2025-11-25T00:00:00Z", "2025-11-25T00:00:01Z", ttl);
        t.poll_interval = poll;
        t.status_message = msg;
        check(&t)?;
        check(&CreateTaskResult::new(t.clone()))?;
        check(&ListTasksResult::new(vec![t]))?;
    }

    #[test]
    fn resources(r in resource(), c in proptest::collection::vec(resource_contents(), 0..3)) {
        check(&r)?;
        check(&ReadResourceResult::new(c))?;
    }
}
