//! The restaurants the offline model knows by name, the way a real model knows that Chả Cá
//! Thăng Long is in Hà Nội: enough to search the right city for a restaurant someone names
//! in a new conversation. Ids are never taken from here: a booking uses the id a real
//! searchRestaurants result gave.

use super::read::{alternatives, PhraseIndex, Utterance};
use std::{collections::HashMap, sync::LazyLock};

/// One restaurant of the seed catalogue as people name it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) struct KnownRestaurant {
    pub(super) name: &'static str,
    /// The canonical city (see `tools::city::CITY_LEXICON`).
    pub(super) city: &'static str,
    /// The kind of food as the catalogue writes it: a search for it in `city` lists the
    /// restaurant.
    pub(super) cuisine: &'static str,
    /// Other folded spellings people use ("pho thin" for "Phở Thìn Lò Đúc", "la vong" for
    /// "Chả Cá Lã Vọng"). Only names nobody uses for anything else: "Thăng Long" (Hà
    /// Nội's old name, its citadel, an avenue) or "Bà Cả" ("ông bà cả nhà") name a place
    /// only once a search has shown it (`plan_search::Restaurant::spoken_names`).
    pub(super) aliases: &'static [&'static str],
}

const fn known(
    name: &'static str,
    city: &'static str,
    cuisine: &'static str,
    aliases: &'static [&'static str],
) -> KnownRestaurant {
    KnownRestaurant {
        name,
        city,
        cuisine,
        aliases,
    }
}

/// `migrations/0003_seed_restaurants.sql`, name by name; a test keeps the two in step.
pub(super) const KNOWN_RESTAURANTS: &[KnownRestaurant] = &[
    known("Chả Cá Thăng Long", "Hà Nội", "chả cá", &[]),
    known(
        "Bún Chả Hương Liên",
        "Hà Nội",
        "bún chả",
        &["huong lien", "bun cha obama"],
    ),
    known("Phở Gia Truyền Bát Đàn", "Hà Nội", "phở", &["pho bat dan"]),
    known("Phở Thìn Lò Đúc", "Hà Nội", "phở", &["pho thin"]),
    known("Chả Cá Lã Vọng", "Hà Nội", "chả cá", &["la vong"]),
    known("Quán Ăn Ngon", "Hà Nội", "món Việt", &[]),
    known("La Badiane", "Hà Nội", "Pháp", &[]),
    known("Uu Đàm Chay", "Hà Nội", "chay", &[]),
    known("Cà Phê Giảng", "Hà Nội", "cà phê", &["cafe giang"]),
    known("Bún Đậu Ngõ Gạch", "Hà Nội", "bún đậu mắm tôm", &[]),
    known("Lẩu Nấm Ashima", "Hà Nội", "lẩu", &["ashima"]),
    known(
        "Cơm Tấm Ba Ghiền",
        "TP. Hồ Chí Minh",
        "cơm tấm",
        &["ba ghien"],
    ),
    known("Phở Hòa Pasteur", "TP. Hồ Chí Minh", "phở", &["pho hoa"]),
    known("Bánh Xèo 46A", "TP. Hồ Chí Minh", "bánh xèo", &[]),
    known("Ốc Đào", "TP. Hồ Chí Minh", "hải sản", &[]),
    known(
        "Pizza 4P's Bến Thành",
        "TP. Hồ Chí Minh",
        "Ý",
        &["pizza 4p's", "pizza 4ps", "4p's", "4ps"],
    ),
    known("Hum Vegetarian", "TP. Hồ Chí Minh", "chay", &[]),
    known("Sushi Ko", "TP. Hồ Chí Minh", "Nhật", &[]),
    known("Lẩu Cá Kèo Bà Huyện", "TP. Hồ Chí Minh", "lẩu", &[]),
    known("Le Corto", "TP. Hồ Chí Minh", "Pháp", &[]),
    known("Nướng Ngói Sài Gòn", "TP. Hồ Chí Minh", "nướng BBQ", &[]),
    known(
        "Bánh Mì Huỳnh Hoa",
        "TP. Hồ Chí Minh",
        "bánh mì",
        &["huynh hoa"],
    ),
    known("Lẩu Gà Lá É Tao Ngộ", "Đà Lạt", "lẩu gà lá é", &["tao ngo"]),
    known("Bánh Căn Nhà Chung", "Đà Lạt", "bánh căn", &[]),
    known(
        "Bánh Tráng Nướng Dì Đinh",
        "Đà Lạt",
        "bánh tráng nướng",
        &[],
    ),
    known("An Cafe", "Đà Lạt", "cà phê", &[]),
    known("Le Rabelais", "Đà Lạt", "Pháp", &[]),
    known("Nem Nướng Bà Hùng", "Đà Lạt", "nem nướng", &[]),
    known("Nhà Hàng Chay Hoa Sen", "Đà Lạt", "chay", &[]),
    known("Quán Nướng Gió Lùa", "Đà Lạt", "nướng BBQ", &[]),
    known("Mì Quảng Bà Mua", "Đà Nẵng", "mì Quảng", &[]),
    known("Bánh Xèo Bà Dưỡng", "Đà Nẵng", "bánh xèo", &[]),
    known("Hải Sản Bé Mặn", "Đà Nẵng", "hải sản", &["be man"]),
    known("Bún Chả Cá Bà Lữ", "Đà Nẵng", "bún chả cá", &[]),
    known("Madame Lân", "Đà Nẵng", "món Việt", &[]),
    known("Lẩu Bò Ông Tám", "Đà Nẵng", "lẩu", &[]),
    known("La Maison 1888", "Đà Nẵng", "Pháp", &["la maison"]),
    known("Kaizen Sushi", "Đà Nẵng", "Nhật", &[]),
    known("Quán Chay Tâm An", "Đà Nẵng", "chay", &[]),
    known(
        "Bún Bò Huế Bà Tuyết",
        "Huế",
        "bún bò Huế",
        &["bun bo ba tuyet"],
    ),
    known("Cơm Hến Bà Cả", "Huế", "cơm hến", &[]),
    known("Bánh Khoái Hồng Mai", "Huế", "bánh khoái", &[]),
    known("Quán Hạnh", "Huế", "bánh Huế", &[]),
    known("Tịnh Gia Viên", "Huế", "cung đình Huế", &[]),
    known("Nhà Hàng Chay Liên Hoa", "Huế", "chay", &[]),
    known("La Carambole", "Huế", "Pháp", &[]),
    known("Hải Sản Thuận An", "Huế", "hải sản", &[]),
    known("Cà Phê Muối Huế", "Huế", "cà phê", &["ca phe muoi"]),
];

/// Words that say "restaurant" before a name; the name is also known without them.
const GENERIC_PREFIXES: &str = "nha hang|quan|restaurant";

/// The folded word sequences that name a restaurant in a message: its name, the name
/// without a generic "Nhà Hàng"/"Quán" in front, and its aliases.
pub(super) fn spellings(name: &str, aliases: &[&str]) -> Vec<String> {
    let name = Utterance::new(name);
    let words: Vec<&str> = name.tokens.iter().map(|t| t.folded.as_str()).collect();
    let mut spellings = vec![words.join(" ")];
    for prefix in alternatives(GENERIC_PREFIXES) {
        let prefix_len = prefix.split(' ').count();
        if words.len() > prefix_len && words[..prefix_len].join(" ") == prefix {
            let rest = words[prefix_len..].join(" ");
            // "Quán Hạnh" is not named by "hạnh" alone, nor any place by one short word.
            if rest.len() >= 4 && words.len() - prefix_len > 1 {
                spellings.push(rest);
            }
        }
    }
    spellings.extend(aliases.iter().map(|alias| (*alias).to_owned()));
    spellings.retain(|spelling| !spelling.is_empty());
    spellings
}

/// Where a message names a restaurant: the first word and how many words, the longest
/// spelling winning.
pub(super) fn mention(
    utterance: &Utterance,
    name: &str,
    aliases: &[&str],
) -> Option<(usize, usize)> {
    let computed;
    let spellings = match known_spellings(name, aliases) {
        Some(known) => known,
        None => {
            computed = spellings(name, aliases);
            &computed
        }
    };
    spellings
        .iter()
        .filter_map(|spelling| {
            let start = utterance.find(spelling, |t| &t.folded)?;
            Some((start, spelling.split(' ').count()))
        })
        .max_by_key(|(start, length)| (*length, usize::MAX - start))
}

/// The catalogue's spellings, worked out once: every reading of a message looks for every
/// restaurant, and splitting and folding their names each time was a tenth of a reply's
/// CPU.
struct Spellings {
    /// Each restaurant's spellings, in catalogue order.
    of: Vec<Vec<String>>,
    /// A restaurant's place in the catalogue by its name.
    by_name: HashMap<&'static str, usize>,
    /// Every spelling, to find them all in one reading of a message.
    index: PhraseIndex<usize>,
}

fn catalogue() -> &'static Spellings {
    static SPELLINGS: LazyLock<Spellings> = LazyLock::new(|| {
        let of: Vec<Vec<String>> = KNOWN_RESTAURANTS
            .iter()
            .map(|restaurant| spellings(restaurant.name, restaurant.aliases))
            .collect();
        let index = PhraseIndex::new(of.iter().enumerate().flat_map(|(at, spellings)| {
            spellings.iter().map(move |spelling| (spelling.clone(), at))
        }));
        let by_name = KNOWN_RESTAURANTS
            .iter()
            .enumerate()
            .map(|(at, restaurant)| (restaurant.name, at))
            .collect();
        Spellings { of, by_name, index }
    });
    &SPELLINGS
}

/// The spellings of a catalogue restaurant; `None` for a name (or aliases) not in the
/// catalogue.
fn known_spellings(name: &str, aliases: &[&str]) -> Option<&'static [String]> {
    let catalogue = catalogue();
    let at = *catalogue.by_name.get(name)?;
    let known = KNOWN_RESTAURANTS.get(at)?;
    (known.aliases == aliases)
        .then(|| catalogue.of.get(at).map(Vec::as_slice))
        .flatten()
}

/// The aliases the catalogue gives the restaurant called `name`; none for a name it does
/// not have.
pub(super) fn aliases_of(name: &str) -> &'static [&'static str] {
    catalogue()
        .by_name
        .get(name)
        .and_then(|&at| KNOWN_RESTAURANTS.get(at))
        .map_or(&[], |known| known.aliases)
}

/// Where a message names each catalogue restaurant ([`mention`]'s answer for each, in
/// catalogue order), the message read once for all of them.
fn catalogue_mentions(utterance: &Utterance) -> Vec<Option<(usize, usize)>> {
    let mut mentions = vec![None; KNOWN_RESTAURANTS.len()];
    for (start, length, &at) in catalogue().index.folded_in(utterance) {
        // The longest spelling wins, then the earliest: occurrences come by position.
        if let Some(best) = mentions.get_mut(at) {
            if best.is_none_or(|(_, best_length)| length > best_length) {
                *best = Some((start, length));
            }
        }
    }
    mentions
}

/// The catalogue restaurants a message names with its longest mention: one, or several
/// when the same words name places in different cities.
pub(super) fn named_in(utterance: &Utterance) -> Vec<&'static KnownRestaurant> {
    let mut best: Vec<&'static KnownRestaurant> = Vec::new();
    let mut best_length = 0;
    for (restaurant, mention) in KNOWN_RESTAURANTS.iter().zip(catalogue_mentions(utterance)) {
        let Some((_, length)) = mention else {
            continue;
        };
        if length > best_length {
            best = vec![restaurant];
            best_length = length;
        } else if length == best_length {
            best.push(restaurant);
        }
    }
    best
}

/// Every word of the message that belongs to a catalogue restaurant's name, so that
/// "Hồng Mai" is not "mai" (tomorrow), "Ông Tám" not eight people and "Bà Mua" not buying.
pub(super) fn catalogue_spans(utterance: &Utterance) -> Vec<(usize, usize)> {
    catalogue_mentions(utterance)
        .into_iter()
        .flatten()
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::collections::BTreeSet;

    /// The quoted values of each row of an SQL `VALUES` list: enough SQL for our seed.
    fn seed_rows(sql: &str) -> Vec<Vec<String>> {
        let values = &sql[sql.find("VALUES").expect("a VALUES list")..];
        let mut rows = Vec::new();
        let mut row: Vec<String> = Vec::new();
        let mut chars = values.chars().peekable();
        while let Some(c) = chars.next() {
            match c {
                '\'' => {
                    let mut value = String::new();
                    while let Some(c) = chars.next() {
                        if c == '\'' {
                            if chars.peek() == Some(&'\'') {
                                chars.next();
                                value.push('\'');
                            } else {
                                break;
                            }
                        } else {
                            value.push(c);
                        }
                    }
                    row.push(value);
                }
                ')' => rows.push(std::mem::take(&mut row)),
                _ => {}
            }
        }
        rows
    }

    #[test]
    fn the_catalogue_is_the_seed() {
        let sql = include_str!("../../../migrations/0003_seed_restaurants.sql");
        // id, name, city, address, cuisine, search_text, opens_at, closes_at, utc_offset
        let seed: BTreeSet<(String, String, String)> = seed_rows(sql)
            .into_iter()
            .map(|row| (row[1].clone(), row[2].clone(), row[4].clone()))
            .collect();
        let known: BTreeSet<(String, String, String)> = KNOWN_RESTAURANTS
            .iter()
            .map(|r| (r.name.to_owned(), r.city.to_owned(), r.cuisine.to_owned()))
            .collect();
        assert_eq!(seed.len(), 48);
        assert_eq!(known, seed);
        for restaurant in KNOWN_RESTAURANTS {
            assert!(
                crate::tools::city::CITIES.contains(&restaurant.city),
                "{restaurant:?}"
            );
        }
    }

    #[test]
    fn every_restaurant_is_named_by_its_name_alone() {
        for restaurant in KNOWN_RESTAURANTS {
            for text in [
                format!("đặt bàn ở {}", restaurant.name),
                format!("dat ban o {}", crate::tools::city::fold(restaurant.name)),
            ] {
                assert_eq!(named_in(&Utterance::new(&text)), vec![restaurant], "{text}");
            }
        }
    }

    #[test]
    fn names_are_found_without_generic_words_and_by_alias() {
        let named = |text: &str| {
            named_in(&Utterance::new(text))
                .iter()
                .map(|r| r.name)
                .collect::<Vec<_>>()
        };
        assert_eq!(named("book Chay Hoa Sen for 2"), ["Nhà Hàng Chay Hoa Sen"]);
        assert_eq!(named("Pizza 4ps tonight"), ["Pizza 4P's Bến Thành"]);
        assert_eq!(named("phở thìn lúc 7h"), ["Phở Thìn Lò Đúc"]);
        assert!(named("hạnh phúc quá").is_empty());
        assert!(named("tìm quán phở ở Hà Nội").is_empty());
    }

    /// Messages that name restaurants in the ways people do: whole names, folded, without
    /// "Nhà Hàng", by alias, two at once, names inside names, names written twice.
    const MESSAGES: [&str; 10] = [
        "Đặt bàn ở Chả Cá Thăng Long rồi Chả Cá Lã Vọng",
        "bun cha ca ba lu hay bun cha huong lien, bun cha",
        "Pizza 4P's Bến Thành hoặc 4ps, pizza 4ps",
        "chay hoa sen, nha hang chay hoa sen, Nhà Hàng Chay Liên Hoa",
        "la maison 1888 la maison",
        "quán hạnh, hạnh, Quán Hạnh ở Huế",
        "",
        "phở thìn phở gia truyền bát đàn pho bat dan",
        "Cà Phê Muối Huế — ca phe muoi — Cà Phê Giảng — cafe giang",
        "Lẩu Bò Ông Tám cho 8 người, lẩu bò",
    ];

    #[test]
    fn the_catalogue_read_at_once_finds_what_each_name_alone_finds() {
        for text in MESSAGES {
            let said = Utterance::new(text);
            let one_by_one: Vec<Option<(usize, usize)>> = KNOWN_RESTAURANTS
                .iter()
                .map(|r| {
                    let spellings = spellings(r.name, r.aliases);
                    spellings
                        .iter()
                        .filter_map(|s| {
                            Some((
                                said.positions_folded(s).first().copied()?,
                                s.split(' ').count(),
                            ))
                        })
                        .max_by_key(|(start, length)| (*length, usize::MAX - start))
                })
                .collect();
            assert_eq!(catalogue_mentions(&said), one_by_one, "{text}");
            let name_by_name: Vec<(usize, usize)> = KNOWN_RESTAURANTS
                .iter()
                .filter_map(|r| mention(&said, r.name, r.aliases))
                .collect();
            assert_eq!(catalogue_spans(&said), name_by_name, "{text}");
            assert!(
                !one_by_one.iter().all(Option::is_none) || text.is_empty(),
                "{text} names no restaurant: the test reads nothing"
            );
        }
    }
}
