-- GiftGenius: the gift catalogue, checkout drafts, (fictional) checkouts, and the
-- idempotency records that make create_checkout_session safe to retry.
--
-- Runs unchanged on SQLite and PostgreSQL: TEXT and INTEGER columns only, money as whole
-- đồng, timestamps as RFC 3339 UTC text 'YYYY-MM-DDTHH:MM:SS.mmmZ' (ordered as text).

CREATE TABLE IF NOT EXISTS gifts (
    id            TEXT PRIMARY KEY NOT NULL,
    name          TEXT NOT NULL,
    description   TEXT NOT NULL,
    price_vnd     INTEGER NOT NULL CHECK (price_vnd > 0),
    -- Space-separated canonical interest tags: gardening reading cooking coffee tea music
    -- sports travel tech art games fashion beauty wellness photography. The executor maps
    -- what people type ("làm vườn", "cà phê"…) to these; the tests check every row uses
    -- only known tags.
    tags          TEXT NOT NULL,
    -- Space-separated relationships the gift suits (partner parent child sibling
    -- grandparent friend colleague teacher other), or 'any'.
    relationships TEXT NOT NULL,
    min_age       INTEGER NOT NULL CHECK (min_age >= 0),
    max_age       INTEGER NOT NULL CHECK (max_age >= min_age)
);

-- A draft is a price quote for one gift: nothing is bought until it is committed.
CREATE TABLE IF NOT EXISTS checkout_drafts (
    -- 'DR-' and 8 upper-case hex digits.
    id           TEXT PRIMARY KEY NOT NULL,
    owner_id     TEXT NOT NULL,
    gift_id      TEXT NOT NULL REFERENCES gifts (id),
    -- The gift's price when the draft was made: the person confirms this total.
    price_vnd    INTEGER NOT NULL CHECK (price_vnd > 0),
    delivery_vnd INTEGER NOT NULL CHECK (delivery_vnd >= 0),
    total_vnd    INTEGER NOT NULL CHECK (total_vnd = price_vnd + delivery_vnd),
    status       TEXT NOT NULL CHECK (status IN ('open', 'committed')),
    created_at   TEXT NOT NULL
);
-- At most one open draft per person and gift: prepare_checkout inserts with ON CONFLICT DO
-- NOTHING and reads the open draft back, so calling it again returns the same draft. A
-- committed draft leaves the index, so buying the same gift again gets a new draft.
CREATE UNIQUE INDEX IF NOT EXISTS checkout_drafts_open
    ON checkout_drafts (owner_id, gift_id) WHERE status = 'open';

CREATE TABLE IF NOT EXISTS checkouts (
    -- 'CHK-' and 10 upper-case hex digits.
    id                TEXT PRIMARY KEY NOT NULL,
    owner_id          TEXT NOT NULL,
    -- UNIQUE: a draft is bought at most once, whatever keys the requests carried.
    draft_id          TEXT NOT NULL UNIQUE REFERENCES checkout_drafts (id),
    gift_name         TEXT NOT NULL,
    total_vnd         INTEGER NOT NULL CHECK (total_vnd > 0),
    -- Made up ('DEMO-PAY-…'): payments are fictional.
    payment_reference TEXT NOT NULL UNIQUE,
    -- The key of the request that made it, for support and for the precheck of a retry.
    idempotency_key   TEXT NOT NULL,
    created_at        TEXT NOT NULL
);
CREATE INDEX IF NOT EXISTS checkouts_owner ON checkouts (owner_id, created_at);

-- One row per (person, tool, key): the first request with a key runs, later ones with the
-- same arguments get its stored result, with other arguments an error. See
-- src/idempotency.rs.
CREATE TABLE IF NOT EXISTS idempotency_keys (
    owner_id     TEXT NOT NULL,
    -- The tool's name.
    scope        TEXT NOT NULL,
    idem_key     TEXT NOT NULL,
    -- SHA-256 (hex) of the canonical JSON of the arguments that matter.
    fingerprint  TEXT NOT NULL,
    state        TEXT NOT NULL CHECK (state IN ('running', 'done')),
    -- The stored result (JSON: {"ok": …} or {"error": …}); set when done.
    result       TEXT,
    -- Who holds the lease while running: a holder whose lease was taken over cannot
    -- record its result (its transaction rolls back instead).
    lease_token  TEXT,
    -- While running: when the lease ends. A holder that crashed leaves the row running;
    -- after this moment another request may take it over.
    locked_until TEXT,
    created_at   TEXT NOT NULL,
    updated_at   TEXT NOT NULL,
    PRIMARY KEY (owner_id, scope, idem_key),
    CHECK (state = 'running' OR result IS NOT NULL),
    CHECK (state = 'done' OR (lease_token IS NOT NULL AND locked_until IS NOT NULL))
);

-- The catalogue: 37 gifts sold in Vietnam, 55.000–4.500.000 ₫. Nothing is tagged for
-- diving, and nothing under 60.000 ₫ is tagged sports: the tests rely on both.
INSERT INTO gifts (id, name, description, price_vnd, tags, relationships, min_age, max_age)
VALUES
    ('g-bo-lam-vuon-mini', 'Bộ dụng cụ làm vườn mini', 'Xẻng, cào, kéo tỉa và găng tay vừa một ban công nhỏ.', 250000, 'gardening', 'any', 10, 120),
    ('g-hat-giong-rau-sach', 'Bộ hạt giống rau sạch 10 loại', 'Rau muống, cải, húng quế… kèm hướng dẫn gieo trồng trong chậu.', 65000, 'gardening cooking', 'any', 8, 120),
    ('g-chau-cay-luoi-ho', 'Chậu cây lưỡi hổ để bàn', 'Cây lọc không khí, dễ chăm, trong chậu gốm trắng.', 150000, 'gardening wellness', 'parent grandparent friend colleague teacher other', 12, 120),
    ('g-sach-nha-gia-kim', 'Sách “Nhà giả kim” bìa cứng', 'Tiểu thuyết của Paulo Coelho, bản dịch tiếng Việt, bìa cứng.', 120000, 'reading', 'any', 12, 120),
    ('g-kindle-paperwhite', 'Máy đọc sách Kindle Paperwhite', 'Màn hình không chói, pin dùng nhiều tuần, chứa hàng nghìn cuốn sách.', 3900000, 'reading tech', 'partner parent child sibling friend', 10, 120),
    ('g-den-doc-sach-kep', 'Đèn đọc sách kẹp gáy sạc USB', 'Ánh sáng ấm, ba mức sáng, kẹp vào bìa sách.', 150000, 'reading tech', 'any', 8, 120),
    ('g-kep-sach-dong-hoi-an', 'Bộ kẹp sách bằng đồng hoạ tiết Hội An', 'Ba kẹp sách khắc đèn lồng và mái phố cổ.', 85000, 'reading art', 'any', 8, 120),
    ('g-phin-ca-phe-bmt', 'Bộ phin nhôm và cà phê Buôn Ma Thuột 500 g', 'Cà phê rang mộc cùng phin pha truyền thống.', 180000, 'coffee', 'partner parent grandparent sibling friend colleague teacher other', 18, 120),
    ('g-may-xay-ca-phe-tay', 'Máy xay cà phê cầm tay lưỡi sứ', 'Xay vừa đủ một ly, chỉnh được độ mịn.', 450000, 'coffee cooking', 'partner parent sibling friend colleague', 18, 120),
    ('g-tra-shan-tuyet', 'Hộp trà Shan Tuyết Hà Giang 200 g', 'Trà cổ thụ vùng cao, hộp giấy dó làm quà.', 220000, 'tea', 'parent grandparent colleague teacher other', 18, 120),
    ('g-tra-sen-tay-ho', 'Trà sen Tây Hồ hộp quà', 'Trà ướp hoa sen Tây Hồ theo cách truyền thống, hộp sơn mài.', 1200000, 'tea', 'parent grandparent teacher', 30, 120),
    ('g-am-chen-bat-trang', 'Bộ ấm chén gốm Bát Tràng', 'Ấm và sáu chén men lam vẽ tay.', 650000, 'tea art', 'partner parent grandparent teacher', 25, 120),
    ('g-loa-bluetooth-mini', 'Loa Bluetooth chống nước mini', 'Nhỏ gọn, nghe nhạc 12 giờ, mang đi dã ngoại được.', 550000, 'music tech travel', 'any', 10, 120),
    ('g-tai-nghe-chong-on', 'Tai nghe không dây chống ồn', 'Chống ồn chủ động, hợp cho người hay đi xa hoặc làm việc ở quán.', 2500000, 'music tech travel', 'partner child sibling friend colleague', 12, 120),
    ('g-dan-ukulele', 'Đàn ukulele gỗ cho người mới', 'Kèm bao đàn, dây dự phòng và sách hợp âm.', 690000, 'music art', 'partner child sibling friend', 8, 120),
    ('g-dia-than-trinh-cong-son', 'Đĩa than tuyển tập Trịnh Công Sơn', 'Những ca khúc quen thuộc trên đĩa than 180 g.', 850000, 'music', 'partner parent grandparent friend teacher', 20, 120),
    ('g-tham-yoga', 'Thảm tập yoga TPE 6 mm', 'Chống trượt, nhẹ, kèm dây đeo.', 320000, 'sports wellness', 'any', 12, 120),
    ('g-binh-giu-nhiet', 'Bình nước thể thao giữ nhiệt 750 ml', 'Giữ lạnh 24 giờ, nắp bật một tay.', 190000, 'sports travel', 'any', 8, 120),
    ('g-vot-cau-long', 'Vợt cầu lông khung carbon', 'Nhẹ, cân bằng, kèm túi đựng và hộp cầu.', 1150000, 'sports', 'partner child sibling friend colleague', 10, 70),
    ('g-vong-suc-khoe', 'Vòng đeo tay theo dõi sức khoẻ', 'Đếm bước, đo nhịp tim và giấc ngủ, pin hai tuần.', 890000, 'tech sports wellness', 'any', 12, 120),
    ('g-balo-du-lich', 'Ba lô du lịch chống nước 30 L', 'Ngăn laptop, quai đeo êm, vừa hành lý xách tay.', 590000, 'travel fashion', 'partner child sibling friend colleague', 12, 120),
    ('g-goi-co-chu-u', 'Gối kê cổ chữ U cho chuyến bay dài', 'Mút nhớ hình, vỏ tháo giặt được.', 160000, 'travel wellness', 'any', 12, 120),
    ('g-so-tay-bia-da', 'Sổ tay bìa da khắc tên', 'Giấy kem 200 trang, khắc tên người nhận lên bìa.', 280000, 'art travel', 'partner sibling friend colleague teacher', 12, 120),
    ('g-bo-mau-nuoc', 'Bộ màu nước 24 màu kèm cọ', 'Màu nén, ba cây cọ và sổ giấy vẽ.', 350000, 'art', 'partner child sibling friend', 6, 120),
    ('g-tranh-son-mai', 'Tranh sơn mài phố cổ Hội An', 'Tranh sơn mài vẽ tay 30 × 40 cm, khung gỗ.', 1800000, 'art', 'parent grandparent teacher colleague', 20, 120),
    ('g-lego-creator', 'Bộ lắp ráp LEGO Creator 3 trong 1', 'Một bộ, ba mô hình để lắp lần lượt.', 950000, 'games', 'child sibling friend', 8, 120),
    ('g-co-tuong-go', 'Bộ cờ tướng gỗ hương', 'Quân cờ khắc tay, bàn cờ gấp gọn.', 420000, 'games', 'parent grandparent friend colleague', 10, 120),
    ('g-board-game-ma-soi', 'Board game Ma Sói bản tiếng Việt', 'Trò chơi nhóm từ 6 đến 18 người.', 180000, 'games', 'child sibling friend colleague', 10, 120),
    ('g-khan-lua-ha-dong', 'Khăn lụa tơ tằm Hà Đông', 'Lụa tơ tằm dệt ở làng Vạn Phúc, hộp quà.', 480000, 'fashion', 'partner parent grandparent teacher', 18, 120),
    ('g-dong-ho-thong-minh', 'Đồng hồ thông minh', 'Nghe gọi, theo dõi luyện tập, màn hình AMOLED.', 4500000, 'tech sports fashion', 'partner parent sibling friend', 14, 120),
    ('g-bo-cham-soc-da', 'Bộ chăm sóc da thiên nhiên', 'Sữa rửa mặt, toner và kem dưỡng từ thảo mộc Việt.', 690000, 'beauty wellness', 'partner parent sibling friend', 16, 120),
    ('g-son-duong-dau-dua', 'Son dưỡng môi dầu dừa Bến Tre', 'Dầu dừa ép lạnh và sáp ong, thỏi nhỏ bỏ túi.', 55000, 'beauty', 'any', 12, 120),
    ('g-phieu-spa', 'Phiếu spa thư giãn 90 phút', 'Massage thảo dược và xông hơi ở spa nội thành.', 900000, 'wellness beauty', 'partner parent friend colleague', 18, 120),
    ('g-may-anh-instax', 'Máy ảnh chụp lấy liền Instax Mini 12', 'Chụp là có ảnh, kèm 10 tấm phim.', 1890000, 'photography tech', 'partner child sibling friend', 10, 120),
    ('g-khung-anh-go', 'Khung ảnh gỗ để bàn khắc chữ', 'Khung gỗ thông cho ảnh 13 × 18 cm, khắc lời chúc.', 95000, 'photography art', 'any', 0, 120),
    ('g-bo-dao-bep', 'Bộ dao bếp thép Damascus', 'Ba con dao và thớt gỗ me tây.', 1650000, 'cooking', 'partner parent sibling friend', 20, 120),
    ('g-khuon-banh-trung-thu', 'Bộ khuôn bánh trung thu và công thức', 'Bốn mặt khuôn lò xo và sổ công thức nhân truyền thống.', 140000, 'cooking', 'any', 12, 120);
