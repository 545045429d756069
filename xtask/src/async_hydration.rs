//! Removes the async hydration paths of Leptos's erased views from the main module.
//!
//! Every `AnyView` carries, beside its build and (sync) hydrate functions, a pointer to
//! `hydrate_async` for its view type, which walks the whole view tree again as futures.
//! Only `leptos::mount::hydrate_lazy` (and the lazy routes built on it) ever starts that
//! walk; the page hydrates with `hydrate_body` (`frontend/src/lib.rs`), which does not.
//! The pointers still keep every view type's async walk in the bundle: about a tenth of
//! the main module's code. No compiler or wasm-opt pass can see they are never called,
//! since they are only stored in the function table.
//!
//! So the function table's entries for `into_any`'s `hydrate_async` functions (and their
//! futures' poll functions) are pointed at one existing function of another signature,
//! and wasm-opt then drops the code only they reached. Were one ever called, the call
//! would trap on the signature check, never run other code. Table slots keep their places
//! (the chunks import the table), and nothing else in the module changes.

use std::collections::{HashMap, HashSet};

use wasm_encoder::reencode::{Error as ReencodeError, Reencode, RoundtripReencoder};
use wasmparser::{ElementItems, KnownCustom, Name, Parser, Payload, TypeRef};

use crate::Failure;

/// The symbol of tachys's `AnyView` async hydration (`into_any::hydrate_async::<T>`), as
/// it appears, mangled, in the name of each of its instantiations and of their futures.
///
/// Only these, not every function on the async path (each view type's own
/// `RenderHtml::hydrate_async` and its closures): the compiler merges functions whose code
/// is identical, and the name section then names the one body after one of them. Small
/// generic closures on that path can be identical to ones the page runs (tried: pointing
/// all of them away broke the restaurant parts), while each `into_any` instantiation boxes
/// a future of its own view type, so its code is its alone.
const ASYNC_HYDRATION: &str = "8into_any13hydrate_async";

/// What [`drop_async_hydration`] did.
#[derive(Debug, PartialEq, Eq)]
pub struct Dropped {
    /// Functions whose table entries now point at the stand-in.
    pub functions: usize,
    /// Table entries changed.
    pub entries: usize,
}

/// `wasm` with the table entries of the async hydration functions replaced (see the
/// module's doc). A module without function names, or without such functions, comes back
/// unchanged.
pub fn drop_async_hydration(wasm: &[u8]) -> Result<(Vec<u8>, Dropped), Failure> {
    let module = Module::read(wasm).map_err(|e| Failure::new(format!("wasm: {e}")))?;
    let targets: HashSet<u32> = module
        .names
        .iter()
        .filter(|(_, name)| name.contains(ASYNC_HYDRATION))
        .map(|(index, _)| *index)
        .collect();
    let target_types: HashSet<u32> = targets
        .iter()
        .filter_map(|index| module.types.get(index).copied())
        .collect();
    // A defined function whose signature no target has: a call through a replaced entry
    // then fails the signature check.
    let stand_in = module.defined.clone().find(|index| {
        module
            .types
            .get(index)
            .is_some_and(|ty| !target_types.contains(ty))
    });
    let Some(stand_in) = stand_in.filter(|_| !targets.is_empty()) else {
        return Ok((
            wasm.to_vec(),
            Dropped {
                functions: 0,
                entries: 0,
            },
        ));
    };
    let mut stubbing = Stubbing {
        targets,
        stand_in,
        entries: 0,
    };
    let mut out = wasm_encoder::Module::new();
    stubbing
        .parse_core_module(&mut out, Parser::new(0), wasm)
        .map_err(|e| Failure::new(format!("wasm: cannot rewrite the module: {e:?}")))?;
    let dropped = Dropped {
        functions: stubbing.targets.len(),
        entries: stubbing.entries,
    };
    Ok((out.finish(), dropped))
}

/// What the rewrite needs to know of a module.
struct Module {
    /// Function names (the name section's), by function index.
    names: HashMap<u32, String>,
    /// Each function's type index, imports first.
    types: HashMap<u32, u32>,
    /// The indices of the functions the module defines.
    defined: std::ops::Range<u32>,
}

impl Module {
    fn read(wasm: &[u8]) -> Result<Self, wasmparser::Error> {
        let mut names = HashMap::new();
        let mut types = HashMap::new();
        let mut imported = 0;
        let mut defined = 0;
        for payload in Parser::new(0).parse_all(wasm) {
            match payload? {
                Payload::ImportSection(reader) => {
                    for import in reader.into_imports() {
                        if let TypeRef::Func(ty) | TypeRef::FuncExact(ty) = import?.ty {
                            types.insert(imported, ty);
                            imported += 1;
                        }
                    }
                }
                Payload::FunctionSection(reader) => {
                    for ty in reader {
                        types.insert(imported + defined, ty?);
                        defined += 1;
                    }
                }
                Payload::CustomSection(reader) => {
                    if let KnownCustom::Name(reader) = reader.as_known() {
                        for name in reader {
                            // Other subsections (locals, labels, …) are not needed here.
                            if let Ok(Name::Function(map)) = name {
                                for naming in map {
                                    let naming = naming?;
                                    names.insert(naming.index, naming.name.to_owned());
                                }
                            }
                        }
                    }
                }
                _ => {}
            }
        }
        Ok(Self {
            names,
            types,
            defined: imported..imported + defined,
        })
    }
}

/// A re-encoding that changes element segments' function entries and nothing else.
struct Stubbing {
    targets: HashSet<u32>,
    stand_in: u32,
    entries: usize,
}

impl Reencode for Stubbing {
    type Error = std::convert::Infallible;

    fn element_items<'a>(
        &mut self,
        items: ElementItems<'a>,
    ) -> Result<wasm_encoder::Elements<'a>, ReencodeError<Self::Error>> {
        match items {
            ElementItems::Functions(functions) => {
                let mut out = Vec::new();
                for function in functions {
                    let function = function?;
                    if self.targets.contains(&function) {
                        self.entries += 1;
                        out.push(self.stand_in);
                    } else {
                        out.push(function);
                    }
                }
                Ok(wasm_encoder::Elements::Functions(out.into()))
            }
            other => RoundtripReencoder.element_items(other),
        }
    }

    // Custom sections (names, producers, target features, which wasm-opt reads) are copied
    // byte for byte rather than parsed and written again.
    fn parse_custom_section(
        &mut self,
        module: &mut wasm_encoder::Module,
        section: wasmparser::CustomSectionReader<'_>,
    ) -> Result<(), ReencodeError<Self::Error>> {
        module.section(&wasm_encoder::CustomSection {
            name: section.name().into(),
            data: section.data().into(),
        });
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use wasm_encoder::{
        CodeSection, ElementSection, Elements, ExportKind, ExportSection, Function,
        FunctionSection, IndirectNameMap, Instruction, NameMap, NameSection, RefType, TableSection,
        TableType, TypeSection, ValType,
    };

    const ASYNC_NAME: &str = "_RINvNvXs2_NtNtCs1_6tachys4view8any_viewpNtBa_7IntoAny8into_any13hydrate_asyncINtB1_4ViewE";

    /// A module with an imported function, three defined ones (the first two of the async
    /// hydration's signature, one of them named as it) and a table holding all four.
    fn module(named: bool) -> Vec<u8> {
        let mut types = TypeSection::new();
        types.ty().function([ValType::I32, ValType::I32], []);
        types.ty().function([], [ValType::I32]);
        let mut imports = wasm_encoder::ImportSection::new();
        imports.import("env", "f", wasm_encoder::EntityType::Function(0));
        let mut functions = FunctionSection::new();
        functions.function(0).function(0).function(1);
        let mut table = TableSection::new();
        table.table(TableType {
            element_type: RefType::FUNCREF,
            table64: false,
            minimum: 5,
            maximum: None,
            shared: false,
        });
        let mut exports = ExportSection::new();
        exports.export("table", ExportKind::Table, 0);
        let mut elements = ElementSection::new();
        elements.active(
            Some(0),
            &wasm_encoder::ConstExpr::i32_const(1),
            Elements::Functions(vec![0, 1, 2, 3].into()),
        );
        let mut code = CodeSection::new();
        for body in [&[][..], &[][..], &[Instruction::I32Const(7)][..]] {
            let mut function = Function::new([]);
            for instruction in body {
                function.instruction(instruction);
            }
            function.instruction(&Instruction::End);
            code.function(&function);
        }
        let mut module = wasm_encoder::Module::new();
        module
            .section(&types)
            .section(&imports)
            .section(&functions)
            .section(&table)
            .section(&exports)
            .section(&elements)
            .section(&code);
        if named {
            let mut names = NameMap::new();
            names.append(0, "env_f");
            names.append(1, ASYNC_NAME);
            names.append(2, "_RNvCs1_3app8hydrate");
            names.append(3, "_RNvCs1_3app5seven");
            let mut section = NameSection::new();
            section.functions(&names);
            section.locals(&IndirectNameMap::new());
            module.section(&section);
        }
        module.section(&wasm_encoder::CustomSection {
            name: "target_features".into(),
            data: (&[1, b'+', 4, b'a', b'b', b'c', b'd'][..]).into(),
        });
        module.finish()
    }

    fn table_entries(wasm: &[u8]) -> Vec<u32> {
        let mut entries = Vec::new();
        for payload in Parser::new(0).parse_all(wasm) {
            if let Payload::ElementSection(reader) = payload.unwrap() {
                for element in reader {
                    if let ElementItems::Functions(functions) = element.unwrap().items {
                        entries.extend(functions.into_iter().map(Result::unwrap));
                    }
                }
            }
        }
        entries
    }

    #[test]
    fn the_async_hydration_entries_point_at_a_function_of_another_signature() {
        let (out, dropped) = drop_async_hydration(&module(true)).unwrap();
        assert_eq!(
            dropped,
            Dropped {
                functions: 1,
                entries: 1
            }
        );
        // Function 1 (async hydration, type 0) is replaced by function 3, the first
        // defined function of another type; the import and function 2 stay.
        assert_eq!(table_entries(&out), vec![0, 3, 2, 3]);
        wasmparser::Validator::new().validate_all(&out).unwrap();
        // Everything but the element section is as it was, custom sections included.
        let sections = |wasm: &[u8]| -> Vec<(u8, Vec<u8>)> {
            Parser::new(0)
                .parse_all(wasm)
                .filter_map(|payload| payload.unwrap().as_section())
                .map(|(id, range)| (id, wasm[range.start as usize..range.end as usize].to_vec()))
                .filter(|(id, _)| *id != 9)
                .collect()
        };
        assert_eq!(sections(&out), sections(&module(true)));
    }

    #[test]
    fn a_module_without_names_or_targets_is_left_alone() {
        let unnamed = module(false);
        let (out, dropped) = drop_async_hydration(&unnamed).unwrap();
        assert_eq!(out, unnamed);
        assert_eq!(dropped.functions, 0);
        assert!(drop_async_hydration(b"not wasm").is_err());
    }
}
