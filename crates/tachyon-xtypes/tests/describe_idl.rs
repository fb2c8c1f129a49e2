//! From TypeObjects back to a type description (`describe`) and from a description to IDL
//! (`idl::to_idl`): every interop type survives the trip through its complete TypeObjects,
//! and prints as its IDL declares it.

#[path = "../../tachyon-cdr/tests/common/mod.rs"]
mod common;

use common::*;
use tachyon_cdr::{DdsType, TypeDesc};
use tachyon_xtypes::idl::to_idl;
use tachyon_xtypes::{describe, ResolveError, TypeLibrary, TypeRepresentations};

fn all() -> Vec<TypeDesc> {
    [
        ShapeType::type_desc(),
        AppendableShape::type_desc(),
        Primitives::type_desc(),
        Strings::type_desc(),
        Sequences::type_desc(),
        Arrays::type_desc(),
        Nested::type_desc(),
        WithEnum::type_desc(),
        WithUnion::type_desc(),
        WithOptional::type_desc(),
        AppendableStruct::type_desc(),
        MutableStruct::type_desc(),
        HashIds::type_desc(),
        MustUnderstand::type_desc(),
        KeyedMulti::type_desc(),
        KeyedNested::type_desc(),
        KeyedSmallString::type_desc(),
        Big::type_desc(),
    ]
    .into_iter()
    .map(|d| d.expect("described"))
    .collect()
}

#[test]
fn complete_type_objects_give_back_the_description() {
    for desc in all() {
        let reps = TypeRepresentations::of(&desc).expect("representable");
        let mut lib = TypeLibrary::new();
        lib.add_local(&reps);
        let back = describe(&lib, &reps.complete.id).expect("described");
        assert_eq!(back, desc, "{:?}", desc.name());
        // And only what the received objects hold is needed: a library of received ones.
        let mut received = TypeLibrary::new();
        for e in reps.complete.entries() {
            received
                .add_received(&e.id, e.object.clone())
                .expect("kept");
        }
        assert_eq!(
            describe(&received, &reps.complete.id).expect("described"),
            desc
        );
    }
}

#[test]
fn minimal_type_objects_give_names_from_their_hashes() {
    let desc = Inner::type_desc().expect("described");
    let reps = TypeRepresentations::of(&desc).expect("representable");
    let mut lib = TypeLibrary::new();
    lib.add_local(&reps);
    let TypeDesc::Struct(s) = describe(&lib, &reps.minimal.id).expect("described") else {
        panic!("a struct")
    };
    assert!(s.name.starts_with("T_"), "{}", s.name);
    assert_eq!(s.members[0].name, "m_0cc175b9"); // MD5("a")
}

#[test]
fn a_missing_dependency_is_named() {
    let desc = Nested::type_desc().expect("described");
    let reps = TypeRepresentations::of(&desc).expect("representable");
    let mut lib = TypeLibrary::new();
    let top = reps.complete.object.clone().expect("object");
    lib.add_received(&top.id, top.object).expect("kept");
    match describe(&lib, &reps.complete.id) {
        Err(ResolveError::Unresolved(id)) => {
            assert_eq!(id, reps.complete.dependencies[0].id.to_string())
        }
        other => panic!("{other:?}"),
    }
}

fn idl_of(d: Option<TypeDesc>) -> String {
    to_idl(&d.expect("described"))
}

#[test]
fn types_print_as_their_idl() {
    assert_eq!(
        idl_of(ShapeType::type_desc()),
        "@final\nstruct ShapeType {\n    @key string<128> color;\n    long x;\n    long y;\n    \
         long shapesize;\n};\n"
    );
    assert_eq!(
        idl_of(Arrays::type_desc()),
        "@final\nstruct Inner {\n    short a;\n    double b;\n};\n@final\nstruct Arrays {\n    \
         long a1[3];\n    short a2[2][3];\n    string a3[2];\n    double a4[2];\n    \
         octet a5[5];\n    Inner a6[2];\n};\n"
    );
    assert_eq!(
        idl_of(MutableStruct::type_desc()),
        "@mutable\nstruct MutableStruct {\n    @key long ident;\n    @id(10) string name;\n    \
         double value;\n    @optional short opt;\n};\n"
    );
    assert_eq!(
        idl_of(HashIds::type_desc()),
        "@mutable @autoid(HASH)\nstruct HashIds {\n    long alpha;\n    string beta;\n};\n"
    );
    assert_eq!(
        idl_of(Primitives::type_desc()),
        "@final\nstruct Primitives {\n    boolean b;\n    char c;\n    octet o;\n    int8 i8v;\n    \
         uint8 u8v;\n    short s;\n    unsigned short us;\n    long l;\n    unsigned long ul;\n    \
         long long ll;\n    unsigned long long ull;\n    float f;\n    double d;\n    octet o2;\n    \
         double d2;\n};\n"
    );
    // Dependencies first, each once; unions with their labels; enums.
    let u = idl_of(WithUnion::type_desc());
    assert_eq!(
        u,
        "@final\nstruct Inner {\n    short a;\n    double b;\n};\n@final\nunion Choice switch (long) {\n    \
         case 1:\n        long l;\n    case 2:\n        string s;\n    case 3:\n        double d;\n    \
         case 4:\n        Inner inner;\n};\n@final\nunion Small switch (short) {\n    case 1:\n        \
         octet o;\n    case 2:\n        long long ll;\n};\n@final\nstruct WithUnion {\n    Choice a;\n    \
         Choice b;\n    Choice c;\n    Choice d;\n    Small e;\n    Small f;\n};\n"
    );
    assert_eq!(
        idl_of(WithEnum::type_desc()),
        "enum Color {\n    RED,\n    GREEN,\n    BLUE\n};\n@final\nstruct WithEnum {\n    Color c;\n    \
         sequence<Color> cs;\n    Color arr[2];\n};\n"
    );
}

#[test]
fn scoped_names_print_in_modules() {
    #[derive(tachyon_cdr::DdsType)]
    #[dds(name = "A::B::Inner")]
    struct Inner {
        v: i32,
    }
    #[derive(tachyon_cdr::DdsType)]
    #[dds(name = "A::C::Outer", appendable)]
    struct Outer {
        i: Inner,
        #[dds(bound = 4)]
        many: Vec<Inner>,
    }
    assert_eq!(
        idl_of(Outer::type_desc()),
        "module A {\n    module B {\n        @final\n        struct Inner {\n            long v;\n        \
         };\n    };\n    module C {\n        @appendable\n        struct Outer {\n            \
         A::B::Inner i;\n            sequence<A::B::Inner, 4> many;\n        };\n    };\n};\n"
    );
}
