//! One player's tick input in its fixed-size form.

use bevy::input::keyboard::KeyCode;
use bevy::math::Vec2;
use rusting_engine::runtime::{
    AxisBinding, InputBindings, PlayerTickInput, RuntimeInput, TickInput,
};

/// A tick's input (W for `jump`, D and an analog -0.25 on `move_x`, 1.5 pixels of look) becomes
/// 32 bytes and back unchanged, and the `RuntimeInput` made from it gives the same plain form
/// again; bits follow the actions' name order and axes theirs. Fails if the layout or the
/// quantization differs between writing and reading, or the conversion back loses an action.
#[test]
fn a_tick_input_round_trips_through_its_fixed_form() {
    let bindings = InputBindings {
        actions: [
            ("jump".to_owned(), [KeyCode::Space, KeyCode::KeyW].into()),
            ("blast".to_owned(), [KeyCode::KeyE].into()),
        ]
        .into(),
        axes: [(
            "move_x".to_owned(),
            AxisBinding {
                negative: [KeyCode::KeyA].into(),
                positive: [KeyCode::KeyD].into(),
            },
        )]
        .into(),
    };
    let mut tick = TickInput::default();
    tick.pressed = [KeyCode::KeyW, KeyCode::KeyD].into();
    tick.look_delta = Vec2::new(1.5, -0.25);
    let mut frame = RuntimeInput::default();
    frame.set_axis("move_x", -0.25);
    let plain = PlayerTickInput::capture(&bindings, &tick, &frame);
    // "blast" sorts before "jump": bit 0 is blast, bit 1 is jump.
    assert_eq!(plain.actions, 0b10);
    assert_eq!(plain.axes[0], (0.75 * 32767.0) as i16);
    assert!(plain.axes[1..].iter().all(|&a| a == 0));
    assert_eq!(plain.look, [96, -16]);
    let bytes = plain.to_bytes();
    assert_eq!(bytes.len(), PlayerTickInput::SIZE);
    assert_eq!(&bytes[0..4], &[2, 0, 0, 0]);
    assert_eq!(PlayerTickInput::from_bytes(&bytes), plain);

    let back = plain.to_runtime_input(&bindings);
    let mut again = TickInput::default();
    again.pressed = back.pressed.clone();
    again.look_delta = back.look_delta;
    assert_eq!(PlayerTickInput::capture(&bindings, &again, &back), plain);
}

/// A game reads its players' captured input by name: `pressed` for actions, `axis` for axes, each
/// through the bindings' name order. Fails if `pressed` or `action_bit` looks up another bit than
/// `capture` set (for example shifted by one), if `axis` reads another
/// slot or scale, or if an unbound name reads as pressed or moved.
#[test]
fn a_captured_input_reads_back_by_name() {
    let bindings = InputBindings {
        actions: [
            ("jump".to_owned(), [KeyCode::Space].into()),
            ("blast".to_owned(), [KeyCode::KeyE].into()),
            ("crouch".to_owned(), [KeyCode::KeyC].into()),
        ]
        .into(),
        axes: [
            (
                "move_y".to_owned(),
                AxisBinding {
                    negative: [KeyCode::KeyS].into(),
                    positive: [KeyCode::KeyW].into(),
                },
            ),
            (
                "move_x".to_owned(),
                AxisBinding {
                    negative: [KeyCode::KeyA].into(),
                    positive: [KeyCode::KeyD].into(),
                },
            ),
        ]
        .into(),
    };
    let mut tick = TickInput::default();
    tick.pressed = [KeyCode::Space, KeyCode::KeyC, KeyCode::KeyS].into();
    let mut frame = RuntimeInput::default();
    frame.set_axis("move_x", 0.5);
    let input = PlayerTickInput::capture(&bindings, &tick, &frame);
    assert!(input.pressed(&bindings, "jump"));
    assert!(input.pressed(&bindings, "crouch"));
    assert!(!input.pressed(&bindings, "blast"));
    assert!(!input.pressed(&bindings, "fly"));
    // Name order: blast, crouch, jump.
    assert_eq!(PlayerTickInput::action_bit(&bindings, "jump"), Some(0b100));
    assert_eq!(PlayerTickInput::action_bit(&bindings, "fly"), None);
    assert_eq!(input.axis(&bindings, "move_x"), 16383.0 / 32767.0);
    assert_eq!(input.axis(&bindings, "move_y"), -1.0);
    assert_eq!(input.axis(&bindings, "turn"), 0.0);
}

/// Bindings of the most axes a session carries, several of which sort before `move_y` (`aim_x`,
/// `aim_y`, `brake`, `lean`, ...), each given its own value: every axis survives the 32-byte form
/// and reads back by name, `move_y` included (which sorted fifth, past the four the form used to
/// hold, and was lost online). One more axis, or one more action than a session carries, is
/// refused by `check_fits` naming the first that would be dropped. Fails if the form carries
/// fewer axes than `MAX_SESSION_AXES`, or lays the later ones over the look.
#[test]
fn a_session_carries_every_declared_axis() {
    use rusting_engine::runtime::{InputFitError, MAX_SESSION_ACTIONS, MAX_SESSION_AXES};
    let names = [
        "aim_x", "aim_y", "brake", "lean", "move_x", "move_y", "pitch", "roll", "throttle", "yaw",
    ];
    assert_eq!(names.len(), MAX_SESSION_AXES);
    let axis = |k: u8| AxisBinding {
        negative: [KeyCode::Digit0].into(),
        positive: [[KeyCode::KeyA, KeyCode::KeyB, KeyCode::KeyC][k as usize % 3]].into(),
    };
    let mut bindings = InputBindings {
        actions: [("jump".to_owned(), [KeyCode::Space].into())].into(),
        axes: names
            .iter()
            .enumerate()
            .map(|(k, name)| (name.to_string(), axis(k as u8)))
            .collect(),
    };
    PlayerTickInput::check_fits(&bindings).unwrap();
    let mut frame = RuntimeInput::default();
    for (k, name) in names.iter().enumerate() {
        frame.set_axis(*name, (k as f32 + 1.0) / 20.0 - 0.3);
    }
    let mut tick = TickInput::default();
    tick.look_delta = Vec2::new(-3.0, 2.5);
    let plain = PlayerTickInput::capture(&bindings, &tick, &frame);
    let carried = PlayerTickInput::from_bytes(&plain.to_bytes());
    assert_eq!(carried, plain);
    assert_eq!(
        carried.look,
        [-192, 160],
        "the later axes overwrote the look"
    );
    for (k, name) in names.iter().enumerate() {
        let sent = (k as f32 + 1.0) / 20.0 - 0.3;
        let got = carried.axis(&bindings, name);
        assert!(
            (got - sent).abs() < 1.0e-4,
            "axis `{name}` arrived as {got}, sent {sent}"
        );
    }
    let back = carried.to_runtime_input(&bindings);
    assert!((back.axis("move_y") - carried.axis(&bindings, "move_y")).abs() < 1.0e-6);

    bindings.axes.insert("zoom".to_owned(), axis(0));
    assert_eq!(
        PlayerTickInput::check_fits(&bindings),
        Err(InputFitError::Axes {
            count: MAX_SESSION_AXES + 1,
            first_dropped: "zoom".to_owned()
        })
    );
    let message = PlayerTickInput::check_fits(&bindings)
        .unwrap_err()
        .to_string();
    assert!(message.contains("`zoom`"), "{message}");
    bindings.axes.remove("zoom");
    for k in 0..MAX_SESSION_ACTIONS {
        bindings
            .actions
            .insert(format!("action_{k:02}"), [KeyCode::KeyQ].into());
    }
    assert!(matches!(
        PlayerTickInput::check_fits(&bindings),
        Err(InputFitError::Actions { first_dropped, .. }) if first_dropped == "jump"
    ));
}
