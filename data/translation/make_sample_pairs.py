"""Write ``eng-spa.tsv``: English-Spanish sentence pairs written by the seqlab project.

Run from the repository root (the output is committed, so this only needs re-running after an
edit)::

    python data/translation/make_sample_pairs.py

Two parts, both written by hand for this project (nothing is copied from Tatoeba/Anki):

1. ``PHRASES``: everyday sentences, each translated by hand.
2. A small grammar: subjects x verbs x objects with the Spanish conjugations, articles and
   agreement written out in the lexicon below (no rule guesses a form), plus negations,
   yes/no questions and "to be" + adjective sentences with gender and number agreement.

The grammar is enumerated in a fixed order and sampled with a fixed seed, so the file is
reproducible byte for byte.
"""

from __future__ import annotations

import random
from pathlib import Path

OUTPUT = Path(__file__).with_name("eng-spa.tsv")
SEED = 2024
GRAMMAR_SENTENCES = 300

# --- 1. Everyday phrases -----------------------------------------------------------------------
PHRASES = [
    ("Good morning.", "Buenos días."),
    ("Good afternoon.", "Buenas tardes."),
    ("Good night.", "Buenas noches."),
    ("Thank you very much.", "Muchas gracias."),
    ("You are welcome.", "De nada."),
    ("How are you?", "¿Cómo estás?"),
    ("I am fine, thank you.", "Estoy bien, gracias."),
    ("What is your name?", "¿Cómo te llamas?"),
    ("My name is Ana.", "Me llamo Ana."),
    ("Nice to meet you.", "Mucho gusto."),
    ("Where is the station?", "¿Dónde está la estación?"),
    ("Where is the bathroom?", "¿Dónde está el baño?"),
    ("What time is it?", "¿Qué hora es?"),
    ("It is three o'clock.", "Son las tres."),
    ("It is one o'clock.", "Es la una."),
    ("How much does it cost?", "¿Cuánto cuesta?"),
    ("It is very expensive.", "Es muy caro."),
    ("It is cheap.", "Es barato."),
    ("I do not understand.", "No entiendo."),
    ("Can you repeat that?", "¿Puedes repetir eso?"),
    ("Speak more slowly, please.", "Habla más despacio, por favor."),
    ("I am hungry.", "Tengo hambre."),
    ("I am thirsty.", "Tengo sed."),
    ("I am cold.", "Tengo frío."),
    ("I am hot.", "Tengo calor."),
    ("I am sleepy.", "Tengo sueño."),
    ("It is raining.", "Está lloviendo."),
    ("It is snowing.", "Está nevando."),
    ("It is sunny today.", "Hoy hace sol."),
    ("It is cold today.", "Hoy hace frío."),
    ("It is hot today.", "Hoy hace calor."),
    ("The weather is nice.", "Hace buen tiempo."),
    ("See you tomorrow.", "Hasta mañana."),
    ("See you later.", "Hasta luego."),
    ("Goodbye.", "Adiós."),
    ("Excuse me.", "Perdón."),
    ("I am sorry.", "Lo siento."),
    ("Help me, please.", "Ayúdame, por favor."),
    ("Open the window.", "Abre la ventana."),
    ("Close the door.", "Cierra la puerta."),
    ("Turn on the light.", "Enciende la luz."),
    ("Turn off the light.", "Apaga la luz."),
    ("Sit down, please.", "Siéntate, por favor."),
    ("Come here.", "Ven aquí."),
    ("Wait a moment.", "Espera un momento."),
    ("Let's go.", "Vamos."),
    ("I love you.", "Te quiero."),
    ("Happy birthday!", "¡Feliz cumpleaños!"),
    ("Congratulations!", "¡Felicidades!"),
    ("Be careful!", "¡Ten cuidado!"),
    ("Of course.", "Por supuesto."),
    ("I do not know.", "No lo sé."),
    ("I think so.", "Creo que sí."),
    ("I do not think so.", "Creo que no."),
    ("Where do you live?", "¿Dónde vives?"),
    ("I live in Madrid.", "Vivo en Madrid."),
    ("Where are you from?", "¿De dónde eres?"),
    ("I am from Mexico.", "Soy de México."),
    ("How old are you?", "¿Cuántos años tienes?"),
    ("I am twenty years old.", "Tengo veinte años."),
    ("Do you speak English?", "¿Hablas inglés?"),
    ("I speak a little Spanish.", "Hablo un poco de español."),
    ("The train leaves at eight.", "El tren sale a las ocho."),
    ("The shop opens at nine.", "La tienda abre a las nueve."),
    ("The museum is closed on Mondays.", "El museo está cerrado los lunes."),
    ("Today is Monday.", "Hoy es lunes."),
    ("Tomorrow is Friday.", "Mañana es viernes."),
    ("I work on Saturdays.", "Trabajo los sábados."),
    ("We rest on Sundays.", "Descansamos los domingos."),
    ("My phone does not work.", "Mi teléfono no funciona."),
    ("The coffee is too hot.", "El café está demasiado caliente."),
    ("The soup is cold.", "La sopa está fría."),
    ("The bill, please.", "La cuenta, por favor."),
    ("A table for two, please.", "Una mesa para dos, por favor."),
    ("I would like a glass of water.", "Quisiera un vaso de agua."),
    ("The food is delicious.", "La comida está deliciosa."),
    ("I need a doctor.", "Necesito un médico."),
    ("Call the police!", "¡Llama a la policía!"),
    ("My head hurts.", "Me duele la cabeza."),
    ("My feet hurt.", "Me duelen los pies."),
    ("Is this seat free?", "¿Está libre este asiento?"),
    ("The bus is late.", "El autobús llega tarde."),
    ("We are lost.", "Estamos perdidos."),
    ("Turn left at the corner.", "Gira a la izquierda en la esquina."),
    ("Go straight ahead.", "Sigue todo recto."),
    ("The bank is next to the church.", "El banco está al lado de la iglesia."),
    ("The library is near here.", "La biblioteca está cerca de aquí."),
    ("The airport is far away.", "El aeropuerto está lejos."),
    ("I like this song.", "Me gusta esta canción."),
    ("What do you want to eat?", "¿Qué quieres comer?"),
    ("I want to sleep.", "Quiero dormir."),
    ("We have to leave now.", "Tenemos que irnos ahora."),
    ("My sister is a teacher.", "Mi hermana es profesora."),
    ("My father is a doctor.", "Mi padre es médico."),
    ("The children are playing in the garden.", "Los niños están jugando en el jardín."),
    ("The dog is sleeping.", "El perro está durmiendo."),
    ("The cat is under the table.", "El gato está debajo de la mesa."),
    ("The keys are on the table.", "Las llaves están en la mesa."),
    ("It is late.", "Es tarde."),
    ("It is early.", "Es temprano."),
]

# --- 2. A small grammar ---------------------------------------------------------------------
# Subjects: English text, English verb form key ("base" or "third"), Spanish text (empty where
# Spanish drops the pronoun), Spanish person index 0..5 (yo, tú, él/ella, nosotros, vosotros
# unused, ellos/ellas).
SUBJECTS = [
    ("I", "base", "", 0),
    ("you", "base", "", 1),
    ("he", "third", "él", 2),
    ("she", "third", "ella", 2),
    ("my brother", "third", "mi hermano", 2),
    ("my mother", "third", "mi madre", 2),
    ("we", "base", "", 3),
    ("they", "base", "ellos", 5),
    ("the children", "base", "los niños", 5),
]

# Verbs: English base, English third person, Spanish forms for persons 0..5 (index 4 unused).
VERBS = {
    "eat": ("eat", "eats", ["como", "comes", "come", "comemos", "coméis", "comen"]),
    "drink": ("drink", "drinks", ["bebo", "bebes", "bebe", "bebemos", "bebéis", "beben"]),
    "read": ("read", "reads", ["leo", "lees", "lee", "leemos", "leéis", "leen"]),
    "write": ("write", "writes", ["escribo", "escribes", "escribe", "escribimos", "escribís", "escriben"]),
    "want": ("want", "wants", ["quiero", "quieres", "quiere", "queremos", "queréis", "quieren"]),
    "need": ("need", "needs", ["necesito", "necesitas", "necesita", "necesitamos", "necesitáis", "necesitan"]),
    "have": ("have", "has", ["tengo", "tienes", "tiene", "tenemos", "tenéis", "tienen"]),
    "buy": ("buy", "buys", ["compro", "compras", "compra", "compramos", "compráis", "compran"]),
    "see": ("see", "sees", ["veo", "ves", "ve", "vemos", "veis", "ven"]),
    "open": ("open", "opens", ["abro", "abres", "abre", "abrimos", "abrís", "abren"]),
    "go": ("go", "goes", ["voy", "vas", "va", "vamos", "vais", "van"]),
    "live": ("live", "lives", ["vivo", "vives", "vive", "vivimos", "vivís", "viven"]),
}

# Objects per verb: (English object, Spanish object), both complete noun phrases.
OBJECTS = {
    "eat": [("an apple", "una manzana"), ("bread", "pan"), ("rice", "arroz"), ("fish", "pescado"),
            ("soup", "sopa"), ("a sandwich", "un bocadillo"), ("cheese", "queso"),
            ("an orange", "una naranja")],
    "drink": [("water", "agua"), ("milk", "leche"), ("coffee", "café"), ("tea", "té"),
              ("orange juice", "zumo de naranja"), ("a glass of wine", "un vaso de vino")],
    "read": [("a book", "un libro"), ("the newspaper", "el periódico"), ("a letter", "una carta"),
             ("the menu", "la carta"), ("a magazine", "una revista")],
    "write": [("a letter", "una carta"), ("an email", "un correo"), ("a poem", "un poema"),
              ("a story", "un cuento"), ("the list", "la lista")],
    "want": [("a coffee", "un café"), ("a new car", "un coche nuevo"), ("a bigger house", "una casa más grande"),
             ("more time", "más tiempo"), ("a cold beer", "una cerveza fría")],
    "need": [("a pen", "un bolígrafo"), ("money", "dinero"), ("help", "ayuda"), ("a taxi", "un taxi"),
             ("a new phone", "un teléfono nuevo")],
    "have": [("a dog", "un perro"), ("a cat", "un gato"), ("a car", "un coche"), ("two sisters", "dos hermanas"),
             ("a small garden", "un jardín pequeño"), ("three books", "tres libros")],
    "buy": [("bread", "pan"), ("flowers", "flores"), ("a ticket", "un billete"), ("shoes", "zapatos"),
            ("fruit", "fruta"), ("a red shirt", "una camisa roja")],
    "see": [("the sea", "el mar"), ("the moon", "la luna"), ("the mountains", "las montañas"),
            ("a bird", "un pájaro"), ("the river", "el río")],
    "open": [("the door", "la puerta"), ("the window", "la ventana"), ("the box", "la caja"),
             ("the shop", "la tienda")],
    "go": [("to school", "a la escuela"), ("to the market", "al mercado"), ("to the beach", "a la playa"),
           ("to the park", "al parque"), ("to work", "al trabajo"), ("home", "a casa")],
    "live": [("in Madrid", "en Madrid"), ("in a small town", "en un pueblo pequeño"),
             ("near the sea", "cerca del mar"), ("in the city", "en la ciudad")],
}

# "to be" + adjective: (English noun phrase, Spanish noun phrase, plural?, gender "m"/"f").
NOUNS = [
    ("the house", "la casa", False, "f"), ("the houses", "las casas", True, "f"),
    ("the car", "el coche", False, "m"), ("the cars", "los coches", True, "m"),
    ("the room", "la habitación", False, "f"), ("the garden", "el jardín", False, "m"),
    ("the street", "la calle", False, "f"), ("the book", "el libro", False, "m"),
    ("the books", "los libros", True, "m"), ("the city", "la ciudad", False, "f"),
    ("the table", "la mesa", False, "f"), ("the tables", "las mesas", True, "f"),
]
# Adjectives: English, Spanish forms (masc. sg., fem. sg., masc. pl., fem. pl.).
ADJECTIVES = [
    ("big", ("grande", "grande", "grandes", "grandes")),
    ("small", ("pequeño", "pequeña", "pequeños", "pequeñas")),
    ("new", ("nuevo", "nueva", "nuevos", "nuevas")),
    ("old", ("viejo", "vieja", "viejos", "viejas")),
    ("beautiful", ("bonito", "bonita", "bonitos", "bonitas")),
    ("expensive", ("caro", "cara", "caros", "caras")),
    ("clean", ("limpio", "limpia", "limpios", "limpias")),
]


def capitalize(text: str) -> str:
    return text[:1].upper() + text[1:]


def spanish_clause(subject_es: str, verb_es: str, negative: bool) -> str:
    words = [subject_es] if subject_es else []
    if negative:
        words.append("no")
    words.append(verb_es)
    return " ".join(words)


def grammar_pairs() -> list[tuple[str, str]]:
    pairs = []
    for subject_en, form, subject_es, person in SUBJECTS:
        for verb, (base, third, forms_es) in VERBS.items():
            verb_en = base if form == "base" else third
            verb_es = forms_es[person]
            for object_en, object_es in OBJECTS[verb]:
                # Affirmative statement.
                pairs.append((f"{capitalize(subject_en)} {verb_en} {object_en}.",
                              f"{capitalize(spanish_clause(subject_es, verb_es, False))} {object_es}."))
                # Negation: English "do/does not" + base form; Spanish "no" before the verb.
                auxiliary = "does not" if form == "third" else "do not"
                pairs.append((f"{capitalize(subject_en)} {auxiliary} {base} {object_en}.",
                              f"{capitalize(spanish_clause(subject_es, verb_es, True))} {object_es}."))
                # Yes/no question: Spanish keeps the word order and adds ¿...?.
                question_aux = "Does" if form == "third" else "Do"
                pairs.append((f"{question_aux} {subject_en} {base} {object_en}?",
                              f"¿{capitalize(spanish_clause(subject_es, verb_es, False))} {object_es}?"))
    for noun_en, noun_es, plural, gender in NOUNS:
        for adjective_en, forms in ADJECTIVES:
            index = (2 if plural else 0) + (1 if gender == "f" else 0)
            be_en, be_es = ("are", "son") if plural else ("is", "es")
            pairs.append((f"{capitalize(noun_en)} {be_en} {adjective_en}.",
                          f"{capitalize(noun_es)} {be_es} {forms[index]}."))
            pairs.append((f"{capitalize(noun_en)} {be_en} not {adjective_en}.",
                          f"{capitalize(noun_es)} no {be_es} {forms[index]}."))
    return pairs


def main() -> None:
    rng = random.Random(SEED)
    grammar = grammar_pairs()
    chosen = rng.sample(grammar, GRAMMAR_SENTENCES)
    seen = set()
    rows = []
    for english, spanish in PHRASES + chosen:
        if english in seen:
            continue
        seen.add(english)
        rows.append(f"{english}\t{spanish}")
    OUTPUT.write_text("\n".join(rows) + "\n", encoding="utf-8")
    print(f"wrote {len(rows)} pairs to {OUTPUT} ({len(grammar)} grammar sentences available)")


if __name__ == "__main__":
    main()
