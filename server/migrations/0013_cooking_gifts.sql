-- Gifts for people who like cooking. The catalogue had four, one of them a coffee grinder
-- tagged "cooking", so "a gift for my mum who loves cooking" was offered a coffee grinder
-- among three. The grinder is for coffee only; four kitchen gifts join the catalogue
-- (none under 60.000 ₫, none tagged sports or diving: the tests rely on both).
UPDATE gifts SET tags = 'coffee' WHERE id = 'g-may-xay-ca-phe-tay';

INSERT INTO gifts (id, name, description, price_vnd, tags, relationships, min_age, max_age)
VALUES
    ('g-tap-de-vai-linen', 'Tạp dề vải linen thêu tên', 'Tạp dề có túi trước, thêu tên người nhận.', 220000, 'cooking', 'any', 12, 120),
    ('g-so-cong-thuc-mon-viet', 'Sổ công thức món Việt ba miền', '120 món từ Bắc vào Nam, có ảnh từng bước.', 180000, 'cooking', 'any', 12, 120),
    ('g-noi-dat-kho-ca', 'Nồi đất kho cá Bát Tràng', 'Nồi đất nung tráng men, kho cá kho thịt giữ nhiệt lâu.', 320000, 'cooking', 'partner parent grandparent sibling friend', 18, 120),
    ('g-hop-gia-vi-pho', 'Hộp gia vị nấu phở', 'Quế, hồi, thảo quả, đinh hương và hạt mùi rang sẵn, đủ cho năm nồi.', 95000, 'cooking', 'any', 12, 120);
