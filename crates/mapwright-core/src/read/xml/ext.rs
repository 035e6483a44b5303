//! The extensions of `<url>`: Google's image, video, news and geo, PageMap, and hreflang
//! `xhtml:link`.

use super::*;

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(super) enum ImageField {
    Loc,
    Caption,
    Title,
    GeoLocation,
    License,
}

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(super) enum VideoField {
    ThumbnailLoc,
    Title,
    Description,
    ContentLoc,
    PlayerLoc,
    Duration,
    ExpirationDate,
    Rating,
    ViewCount,
    PublicationDate,
    FamilyFriendly,
    Restriction,
    Platform,
    Price,
    RequiresSubscription,
    Uploader,
    Live,
    Tag,
    Category,
    GalleryLoc,
    Id,
}

pub(super) fn video_field(local: &str) -> Option<VideoField> {
    use VideoField::*;
    Some(match local {
        "thumbnail_loc" => ThumbnailLoc,
        "title" => Title,
        "description" => Description,
        "content_loc" => ContentLoc,
        "player_loc" => PlayerLoc,
        "duration" => Duration,
        "expiration_date" => ExpirationDate,
        "rating" => Rating,
        "view_count" => ViewCount,
        "publication_date" => PublicationDate,
        "family_friendly" => FamilyFriendly,
        "restriction" => Restriction,
        "platform" => Platform,
        "price" => Price,
        "requires_subscription" => RequiresSubscription,
        "uploader" => Uploader,
        "live" => Live,
        "tag" => Tag,
        "category" => Category,
        "gallery_loc" => GalleryLoc,
        "id" => Id,
        _ => return None,
    })
}

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(super) enum NewsField {
    Name,
    Language,
    PublicationDate,
    Title,
    Keywords,
    Genres,
    StockTickers,
    Access,
}

impl State {
    pub(super) fn alternate(&mut self, e: &BytesStart<'_>) {
        let [rel, hreflang, href] = attributes(e, ["rel", "hreflang", "href"]);
        if let (Some(rel), Some(hreflang), Some(href)) = (rel, hreflang, href) {
            if rel.trim().eq_ignore_ascii_case("alternate") {
                self.build
                    .ext
                    .alternates
                    .push(Alternate { hreflang: hreflang.trim().to_string(), href: href.trim().to_string() });
            }
        }
    }

    pub(super) fn video_attributes(&mut self, f: VideoField, e: &BytesStart<'_>) {
        if e.attributes_raw().trim().is_empty() {
            if f == VideoField::Price {
                self.video.prices.push(VideoPrice::default());
            }
            return;
        }
        let mut price = VideoPrice::default();
        for a in e.attributes().with_checks(false).flatten() {
            let v = a
                .normalized_value(quick_xml::XmlVersion::Implicit1_0)
                .map(|c| c.trim().to_string())
                .unwrap_or_else(|_| a.value.to_string());
            let v = Some(v);
            match (f, a.key.0) {
                (VideoField::PlayerLoc, "allow_embed") => self.video.player_loc_allow_embed = v,
                (VideoField::PlayerLoc, "autoplay") => self.video.player_loc_autoplay = v,
                (VideoField::Restriction, "relationship") => self.video.restriction_relationship = v,
                (VideoField::Platform, "relationship") => self.video.platform_relationship = v,
                (VideoField::Uploader, "info") => self.video.uploader_info = v,
                (VideoField::GalleryLoc, "title") => self.video.gallery_title = v,
                (VideoField::Price, "currency") => price.currency = v,
                (VideoField::Price, "type") => price.kind = v,
                (VideoField::Price, "resolution") => price.resolution = v,
                _ => {}
            }
        }
        if f == VideoField::Price {
            self.video.prices.push(price);
        }
    }

    pub(super) fn video_field(&mut self, f: VideoField) {
        let t = self.take_text();
        let v = Some(t.clone()).filter(|s| !s.is_empty());
        let vd = &mut self.video;
        use VideoField::*;
        match f {
            ThumbnailLoc => vd.thumbnail_loc = v,
            Title => vd.title = v,
            Description => vd.description = v,
            ContentLoc => vd.content_loc = v,
            PlayerLoc => vd.player_loc = v,
            Duration => vd.duration = t.parse().ok(),
            ExpirationDate => vd.expiration_date = v,
            Rating => vd.rating = t.parse().ok().filter(|r: &f32| r.is_finite()),
            ViewCount => vd.view_count = t.parse().ok(),
            PublicationDate => vd.publication_date = v,
            FamilyFriendly => vd.family_friendly = v,
            Restriction => vd.restriction = v,
            Platform => vd.platform = v,
            Price => {
                if let Some(p) = vd.prices.last_mut() {
                    p.value = t;
                }
            }
            RequiresSubscription => vd.requires_subscription = v,
            Uploader => vd.uploader = v,
            Live => vd.live = v,
            Tag => {
                if let Some(v) = v {
                    vd.tags.push(v);
                }
            }
            Category => vd.category = v,
            GalleryLoc => vd.gallery_loc = v,
            Id => vd.id = v,
        }
    }

    /// The role of a `geo:geo` or a `PageMap` directly inside `<url>`.
    pub(super) fn extension_start(&mut self, ns: Ns, local: &str) -> Role {
        match (ns, local) {
            (Ns::Geo, "geo") => {
                self.build.ext.geo = Some(Box::default());
                Role::Geo
            }
            (Ns::PageMap, "PageMap") => Role::PageMap,
            _ => Role::Skip,
        }
    }

    /// A PageMap's `DataObject` (`type`, `id`) or one of its `Attribute`s (`name`, and the
    /// value as the `value` attribute until text replaces it); one without a name is skipped.
    fn pagemap_child(&mut self, parent: Role, e: &BytesStart<'_>, off: u64) -> Role {
        if parent == Role::PageMap {
            let [kind, id] = attributes(e, ["type", "id"]);
            let kind = kind.map(|k| k.trim().to_string()).unwrap_or_default();
            self.build.ext.pagemap.push(DataObject {
                kind,
                id: id.map(|i| i.trim().to_string()),
                attributes: Vec::new(),
            });
            return Role::DataObject;
        }
        let [name, value] = attributes(e, ["name", "value"]);
        match (name, self.build.ext.pagemap.last_mut()) {
            (Some(name), Some(object)) => {
                let (name, value) = (name.trim().to_string(), value.unwrap_or_default().trim().to_string());
                object.attributes.push(PageMapAttribute { name, value });
                self.begin_text(off);
                Role::PageMapAttribute
            }
            _ => Role::Skip,
        }
    }

    /// The role of an element inside an extension element (`image:image`, `video:video`,
    /// `news:news`, `geo:geo`, `PageMap`).
    pub(super) fn extension_child(&mut self, parent: Role, ns: Ns, local: &str, e: &BytesStart<'_>, off: u64) -> Role {
        match parent {
            Role::Image => {
                let f = match local {
                    "loc" => Some(ImageField::Loc),
                    "caption" => Some(ImageField::Caption),
                    "title" => Some(ImageField::Title),
                    "geo_location" => Some(ImageField::GeoLocation),
                    "license" => Some(ImageField::License),
                    _ => None,
                };
                match f {
                    Some(f) if ns == Ns::Image => {
                        self.begin_text(off);
                        Role::ImageField(f)
                    }
                    _ => Role::Skip,
                }
            }
            Role::Video => match video_field(local) {
                Some(f) if ns == Ns::Video => {
                    self.video_attributes(f, e);
                    self.begin_text(off);
                    Role::VideoField(f)
                }
                _ => Role::Skip,
            },
            Role::News => match (ns, local) {
                (Ns::News, "publication") => Role::NewsPublication,
                (Ns::News, l) => {
                    let f = match l {
                        "publication_date" => Some(NewsField::PublicationDate),
                        "title" => Some(NewsField::Title),
                        "keywords" => Some(NewsField::Keywords),
                        "genres" => Some(NewsField::Genres),
                        "stock_tickers" => Some(NewsField::StockTickers),
                        "access" => Some(NewsField::Access),
                        _ => None,
                    };
                    match f {
                        Some(f) => {
                            self.begin_text(off);
                            Role::NewsField(f)
                        }
                        None => Role::Skip,
                    }
                }
                _ => Role::Skip,
            },
            Role::Geo => match (ns, local) {
                (Ns::Geo, "format") => {
                    self.begin_text(off);
                    Role::GeoFormat
                }
                _ => Role::Skip,
            },
            Role::PageMap if ns == Ns::PageMap && local == "DataObject" => self.pagemap_child(parent, e, off),
            Role::DataObject if ns == Ns::PageMap && local == "Attribute" => self.pagemap_child(parent, e, off),
            Role::NewsPublication => match (ns, local) {
                (Ns::News, "name") => {
                    self.begin_text(off);
                    Role::NewsField(NewsField::Name)
                }
                (Ns::News, "language") => {
                    self.begin_text(off);
                    Role::NewsField(NewsField::Language)
                }
                _ => Role::Skip,
            },
            _ => Role::Skip,
        }
    }

    /// Ends an extension element or one of its fields.
    pub(super) fn extension_end(&mut self, role: Role) {
        match role {
            Role::ImageField(f) => {
                let v = Some(self.take_text()).filter(|s| !s.is_empty());
                let img = &mut self.image;
                match f {
                    ImageField::Loc => img.loc = v.unwrap_or_default(),
                    ImageField::Caption => img.caption = v,
                    ImageField::Title => img.title = v,
                    ImageField::GeoLocation => img.geo_location = v,
                    ImageField::License => img.license = v,
                }
            }
            Role::Image => {
                let img = std::mem::take(&mut self.image);
                if !img.loc.is_empty() {
                    self.build.ext.images.push(img);
                }
            }
            Role::VideoField(f) => {
                self.video_field(f);
            }
            Role::Video => {
                let v = std::mem::take(&mut self.video);
                self.build.ext.videos.push(v);
            }
            Role::NewsField(f) => {
                let v = Some(self.take_text()).filter(|s| !s.is_empty());
                let n = &mut self.news;
                match f {
                    NewsField::Name => n.publication_name = v,
                    NewsField::Language => n.language = v,
                    NewsField::PublicationDate => n.publication_date = v,
                    NewsField::Title => n.title = v,
                    NewsField::Keywords => n.keywords = v,
                    NewsField::Genres => n.genres = v,
                    NewsField::StockTickers => n.stock_tickers = v,
                    NewsField::Access => n.access = v,
                }
            }
            Role::News => {
                self.build.ext.news = Some(Box::new(std::mem::take(&mut self.news)));
            }
            Role::GeoFormat => {
                let v = Some(self.take_text()).filter(|s| !s.is_empty());
                if let Some(geo) = self.build.ext.geo.as_mut() {
                    geo.format = v;
                }
            }
            Role::PageMapAttribute => {
                let t = self.take_text();
                let attribute = self.build.ext.pagemap.last_mut().and_then(|o| o.attributes.last_mut());
                if let (false, Some(a)) = (t.is_empty(), attribute) {
                    a.value = t;
                }
            }
            _ => {}
        }
    }
}
