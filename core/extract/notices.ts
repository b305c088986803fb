/**
 * Short blocks that speak to the reader about the page rather than carry its text: credit and
 * source lines ("Foto: …", "Quelle: …"), calls to follow, subscribe, share or rate, notes on
 * cookies, login, advertising and rights, and the bare labels of boxes and rails ("Mehr zum Thema"). CMSs put
 * them inside the article container, where the scorer keeps them. They are recognised by their
 * wording, in the languages most pages use, and only in short blocks: a paragraph that merely
 * mentions subscribing or sharing is article text.
 */

/** Longest block (collapsed characters) judged by its wording. */
export const NOTICE_MAX = 250;

/**
 * A credit or source label opening the block: "Foto: name", "Quelle: agency", "Crédits photos :",
 * "Abbildung 4: caption". Article sentences do not start with a bare label and a colon.
 */
const CREDIT =
  /^(?:(?:photo|foto|bild|image|titelbild|beitragsbild|headerbild|fotos|photos|bilder|images|bildquelle|fotoquelle|bildnachweis|fotonachweis|fotocredits?|credits?|crédits?(?: photos?)?|quelle|quellen|quellenangaben|source|sources|fuente|fuentes|fonte|źródło|źródła|zdjęcie|fot)\s*:|(?:abbildung|abb\.|figure|fig\.|grafik)\s*\d*\s*:)/iu;

/**
 * Calls to the reader that open a block: follow on a network, subscribe, share, rate the article.
 * Each phrase is an imperative or a question to the reader, not a statement about subscriptions.
 */
const CALL_AT_START = new RegExp(
  [
    // English
    "follow (?:us|[\\p{Lu}][\\p{L}.]*(?: [\\p{Lu}][\\p{L}.]*)*) on (?:twitter|facebook|instagram|linkedin|youtube|tiktok|social)",
    "subscribe (?:now|today|here)\\b", "sign up (?:for|to) (?:our|the) (?:free )?(?:daily |weekly )?newsletter",
    "share this(?: article| story| post| page)?\\s*:?$", "was this (?:article|page|post) (?:helpful|useful)",
    // German
    "(?:möchten sie |willst du )?(?:diesen |den )?(?:artikel|beitrag|inhalt|seite) (?:teilen|empfehlen)",
    "(?:war|ist) (?:der|dieser|die|diese) (?:artikel|beitrag|seite|text) (?:nützlich|hilfreich|interessant)",
    "(?:hat |gefällt )?(?:ihnen|dir) (?:der|dieser|unser|unsere) (?:artikel|beitrag|text|magazin)\\b.{0,20}\\?",
    "(?:artikel|beitrag) gefallen\\?", "gefällt (?:ihnen|dir) (?:der|dieser|unser|unsere)\\b",
    "folgen sie uns\\b", "folge uns\\b", "jetzt (?:newsletter )?abonnieren", "(?:zum |unseren )?newsletter (?:abonnieren|anmelden|bestellen)",
    "abonniere unseren", "der beitrag wurde am .{0,60} veröffentlicht",
    // Spanish, Portuguese, French, Italian, Polish
    "síguenos\\b", "suscr[ií]bete\\b", "hazte (?:miembro|socio)", "siga-nos\\b", "assine (?:já|agora)",
    "suivez-nous\\b", "abonnez-vous\\b", "inscrivez-vous\\b", "seguici\\b", "iscriviti\\b",
    "zapraszamy (?:też |również )?do (?:subskrypcji|obserwowania)", "obserwuj nas\\b", "udostępnij\\b",
  ]
    .map((p) => `^(?:${p})`)
    .join("|"),
  "iu",
);

/** Calls that give themselves away anywhere in a short block. */
const CALL_ANYWHERE = /\bthis entry was posted in\b|\bbookmark the permalink\b|\bdownload (?:the|our) [\p{L}\s]{0,30}apps? for (?:ios|android)\b|vergiss nicht,? (?:ihn |es )?zu teilen/iu;

/**
 * Notes about the page itself anywhere in a short block: cookie and privacy notices, login state,
 * advertising and affiliate disclosures, rights reserved, disclaimers.
 */
const PAGE_NOTE = new RegExp(
  [
    "durch die weitere nutzung (?:der|dieser) (?:seite|website|webseite)", "respektieren (?:deine|ihre) privatsphäre",
    "wir (?:verwenden|nutzen) cookies", "(?:this|our) (?:site|website) uses cookies", "utilizamos cookies", "nous utilisons des cookies",
    "sie sind (?:aktuell |derzeit |leider )?nicht (?:eingeloggt|angemeldet)", "you are not logged in",
    "(?:dieser|der) (?:beitrag|artikel|post) enthält (?:werbung|affiliate)", "affiliate-?links?\b", "bei den (?:verlinkungen|links) handelt es sich um",
    "materiał chroniony prawem", "todos los derechos reservados", "tous droits réservés", "tutti i diritti riservati",
    "alle angaben ohne gewähr",
  ].join("|"),
  "iu",
);

/**
 * A block that is nothing but the label of a box or rail ("Mehr zum Thema", "Kontakt:", "Read more"):
 * its contents, when they are article text, stay; the label introduces page furniture.
 */
const BOX_LABEL =
  /^(?:kontakt|pressekontakt|ansprechpartner(?:in)?|weitere informationen|mehr informationen|zum weiterlesen|mehr zum thema|weiterführende links|contact|contact us|more information|further information|read more|related|related articles|más información|plus d'informations|per saperne di più)\s*:?$/iu;

/** The heading of a rail of other stories, with at most a few words more ("Entdecke weitere Homestorys"). */
const RAIL_LABEL =
  /^(?:neueste artikel|ähnliche (?:artikel|beiträge)|das könnte (?:dich|sie) auch interessieren|auch interessant|lesen sie auch|empfehlungen (?:aus|der)|entdecke weitere|weitere (?:artikel|beiträge)|vorschau auf den nächsten artikel|beliebte (?:artikel|beiträge)|you may also like|more stories|related (?:posts|stories)|noticias relacionadas|artículos relacionados|te puede interesar|(?:à )?lire aussi|leggi anche)\b.{0,40}$/iu;

/** True when a block's collapsed text reads as a credit line, a call to the reader, a page note or a box label. */
export function isNoticeText(text: string): boolean {
  if (text.length > NOTICE_MAX) return false;
  return CREDIT.test(text) || CALL_AT_START.test(text) || CALL_ANYWHERE.test(text) || PAGE_NOTE.test(text) || BOX_LABEL.test(text) || RAIL_LABEL.test(text);
}
