//! The word lists the readers match: cuisines, relationships, interests, money and weight
//! units (cities are in `tools::city`, shared with the tools). Data only, so a new spelling
//! is a one-line change.

use shared::tools::RelationshipType;

pub(super) struct CuisineRule {
    pub(super) vi: &'static str,
    pub(super) en: &'static str,
    /// `|`-separated phrases that name the cuisine anywhere.
    pub(super) phrases: &'static str,
    /// `|`-separated words that name it only after a food word.
    pub(super) after_food_word: &'static str,
}

pub(super) const CUISINES: &[CuisineRule] = &[
    // Before "bún chả": "bún chả cá" is a fish dish, and "chả cá" is Hà Nội's fish dish.
    CuisineRule {
        vi: "chả cá",
        en: "cha ca",
        phrases: "chả cá|cha ca",
        after_food_word: "",
    },
    CuisineRule {
        vi: "bún đậu",
        en: "bun dau",
        phrases: "bún đậu|bun dau",
        after_food_word: "",
    },
    CuisineRule {
        vi: "mì Quảng",
        en: "mi quang",
        phrases: "mì quảng|mi quang",
        after_food_word: "",
    },
    CuisineRule {
        vi: "bún chả",
        en: "bun cha",
        phrases: "bún chả|bun cha",
        after_food_word: "",
    },
    CuisineRule {
        vi: "bún bò",
        en: "bun bo",
        phrases: "bún bò|bun bo",
        after_food_word: "",
    },
    CuisineRule {
        vi: "phở",
        en: "pho",
        phrases: "phở|pho",
        after_food_word: "",
    },
    CuisineRule {
        vi: "cơm tấm",
        en: "com tam",
        phrases: "cơm tấm|com tam",
        after_food_word: "",
    },
    CuisineRule {
        vi: "hải sản",
        en: "seafood",
        phrases: "hải sản|hai san|seafood",
        after_food_word: "",
    },
    CuisineRule {
        vi: "chay",
        en: "vegetarian",
        phrases: "chay|vegetarian|vegan",
        after_food_word: "",
    },
    CuisineRule {
        vi: "lẩu",
        en: "hotpot",
        phrases: "lẩu|hotpot|hot pot",
        after_food_word: "",
    },
    CuisineRule {
        vi: "bánh xèo",
        en: "banh xeo",
        phrases: "bánh xèo|banh xeo",
        after_food_word: "",
    },
    CuisineRule {
        vi: "nướng",
        en: "bbq",
        phrases: "nướng|nuong|bbq|barbecue",
        after_food_word: "",
    },
    CuisineRule {
        vi: "Ý",
        en: "Italian",
        phrases: "italian|pizza|pasta",
        after_food_word: "ý",
    },
    CuisineRule {
        vi: "Nhật",
        en: "Japanese",
        phrases: "japanese|sushi",
        after_food_word: "nhật",
    },
    CuisineRule {
        vi: "Pháp",
        en: "French",
        phrases: "french",
        after_food_word: "pháp",
    },
    CuisineRule {
        vi: "cà phê",
        en: "cafe",
        phrases: "cà phê|ca phe|cafe|café|coffee",
        after_food_word: "",
    },
];

/// Words mapped to who a gift is for.
pub(super) struct RelationshipRule {
    pub(super) kind: RelationshipType,
    /// `|`-separated phrases, matched as written (lowercased).
    pub(super) phrases: &'static str,
    /// Words that are also pronouns or numbers ("bạn" is "you", "anh" is "he", "ba" is
    /// "three"): they count only after a word like "cho"/"for", or when nothing else
    /// names anyone.
    pub(super) ambiguous: bool,
}

pub(super) const RELATIONSHIPS: &[RelationshipRule] = &[
    RelationshipRule {
        kind: RelationshipType::Partner,
        phrases: "người yêu|bạn gái|bạn trai|vợ|chồng|bà xã|ông xã|nguoi yeu|ban gai|ban trai|\
                  wife|husband|girlfriend|boyfriend|partner|spouse|fiance|fiancé|fiancée",
        ambiguous: false,
    },
    RelationshipRule {
        kind: RelationshipType::Parent,
        phrases: "mẹ|má|mạ|bố|cha|bố mẹ|ba mẹ|cha mẹ|mẹ chồng|mẹ vợ|bố chồng|bố vợ|bo me|ba me|\
                  cha me|mom|mum|mother|mommy|mummy|dad|father|daddy|parent|parents",
        ambiguous: false,
    },
    RelationshipRule {
        kind: RelationshipType::Parent,
        phrases: "ba",
        ambiguous: true,
    },
    RelationshipRule {
        kind: RelationshipType::Child,
        phrases: "con trai|con gái|em bé|con gai|bé trai|bé gái|be trai|be gai|son|daughter|\
                  child|children|kid|kids|baby|boy|girl|toddler|nephew|niece",
        ambiguous: false,
    },
    RelationshipRule {
        kind: RelationshipType::Child,
        phrases: "con|bé",
        ambiguous: true,
    },
    RelationshipRule {
        kind: RelationshipType::Sibling,
        phrases: "anh trai|chị gái|em trai|em gái|anh chị em|chi gai|em gai|brother|sister|\
                  sibling|siblings",
        ambiguous: false,
    },
    RelationshipRule {
        kind: RelationshipType::Sibling,
        phrases: "anh|chị|em",
        ambiguous: true,
    },
    RelationshipRule {
        kind: RelationshipType::Grandparent,
        phrases: "ông bà|ông nội|ông ngoại|bà nội|bà ngoại|ong ba|ong noi|ong ngoai|ba noi|\
                  ba ngoai|grandma|grandmother|grandpa|grandfather|grandparent|grandparents|granny",
        ambiguous: false,
    },
    RelationshipRule {
        kind: RelationshipType::Grandparent,
        phrases: "ông|bà",
        ambiguous: true,
    },
    RelationshipRule {
        kind: RelationshipType::Friend,
        phrases: "bạn thân|bạn bè|ban than|ban be|friend|friends|bff",
        ambiguous: false,
    },
    RelationshipRule {
        kind: RelationshipType::Friend,
        phrases: "bạn",
        ambiguous: true,
    },
    RelationshipRule {
        kind: RelationshipType::Colleague,
        phrases: "đồng nghiệp|sếp|cấp trên|dong nghiep|colleague|colleagues|coworker|co-worker|\
                  coworkers|boss|manager",
        ambiguous: false,
    },
    RelationshipRule {
        kind: RelationshipType::Teacher,
        phrases: "thầy|giáo viên|thầy giáo|cô giáo|thầy cô|giao vien|teacher|professor|tutor",
        ambiguous: false,
    },
    RelationshipRule {
        kind: RelationshipType::Teacher,
        phrases: "cô",
        ambiguous: true,
    },
];

/// Words after which a person named is the one the gift is for ("quà cho mẹ", "for my wife").
pub(super) const GIFT_ANCHORS: &str = "cho|tặng|biếu|quà|for|to|my|gift|gifts|present|presents";

/// After these, "anh", "chị", "bạn"… are pronouns ("anh ấy" is "he"), not relatives.
pub(super) const PRONOUN_MARKERS: &str = "ấy|ơi|ay|oi|ta";

/// After these, "ba" is the number three ("ba tuổi"), not dad.
pub(super) const COUNTED_WORDS: &str =
    "tuổi|tuoi|người|món|cái|năm|tháng|ngày|triệu|trăm|nghìn|ngàn|chục|k";

/// Interests as the canonical English tags suggest_gifts matches, with the words for them.
pub(super) const INTERESTS: &[(&str, &str)] = &[
    (
        "gardening",
        "làm vườn|trồng cây|cây cảnh|trồng hoa|lam vuon|trong cay|gardening|garden|plants",
    ),
    (
        "reading",
        "đọc sách|doc sach|thích sách|mê sách|reading|books|novels",
    ),
    (
        "cooking",
        "nấu ăn|nấu nướng|làm bánh|nau an|cooking|cook|baking",
    ),
    ("coffee", "cà phê|cafe|café|ca phe|coffee"),
    ("tea", "trà|tea"),
    ("music", "âm nhạc|nhạc|am nhac|music"),
    (
        "sports",
        "thể thao|chạy bộ|bóng đá|đá bóng|bơi|the thao|chay bo|sports|sport|running|football|\
         soccer|gym|yoga|fitness",
    ),
    ("travel", "du lịch|du lich|travel|traveling|travelling"),
    ("tech", "công nghệ|cong nghe|tech|technology|gadgets"),
    (
        "art",
        "vẽ|nghệ thuật|hội hoạ|hội họa|nghe thuat|art|painting|drawing",
    ),
    ("games", "game|games|gaming"),
    ("fashion", "thời trang|thoi trang|fashion|clothes"),
    ("beauty", "làm đẹp|mỹ phẩm|lam dep|beauty|makeup|skincare"),
    ("diving", "lặn biển|lặn|lan bien|diving|scuba"),
    (
        "photography",
        "chụp ảnh|nhiếp ảnh|chup anh|photography|photos|camera",
    ),
];

/// Money units and what they multiply by (đồng).
pub(super) const MONEY_UNITS: &[(&str, u64)] = &[
    ("triệu", 1_000_000),
    ("trieu", 1_000_000),
    ("million", 1_000_000),
    ("nghìn", 1_000),
    ("nghin", 1_000),
    ("ngàn", 1_000),
    ("ngan", 1_000),
    ("đồng", 1),
    ("dong", 1),
    ("vnđ", 1),
    ("vnd", 1),
    ("củ", 1_000_000),
    ("tr", 1_000_000),
    ("k", 1_000),
    ("đ", 1),
    ("₫", 1),
];

pub(super) const AT_MOST: &str =
    "dưới|duoi|tối đa|toi da|không quá|khong qua|ko quá|chưa tới|chưa đến|\
                       under|below|less than|at most|up to|max|maximum|within|no more than|<|≤";

pub(super) const AT_LEAST: &str =
    "trên|tren|ít nhất|it nhat|tối thiểu|toi thieu|từ|over|above|more than|\
                        at least|from|min|minimum|>|≥";

pub(super) const ABOUT: &str =
    "khoảng|khoang|tầm|cỡ|chừng|xấp xỉ|around|about|approximately|roughly|approx|~";

pub(super) const RANGE_JOINS: &str = "-|–|—|~|đến|tới|den|toi|to|and";

/// Weight units after a number; the longest first.
pub(super) const WEIGHT_UNITS: &[&str] = &[
    "kilograms",
    "kilogram",
    "kilôgam",
    "kilogam",
    "ki lô",
    "ki-lô",
    "kilô",
    "kilo",
    "kgs",
    "kg",
    "ký",
    "kí",
    "ky",
    "ki",
    "cân",
];
