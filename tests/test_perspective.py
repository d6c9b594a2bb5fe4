import pytest

from memflow.tasks.recall.perspective import first_person


@pytest.mark.parametrize("query,expected", [
    ("How does the user get to work?", "How do I get to work?"),
    ("Does the user have a dog?", "Do I have a dog?"),
    ("Is the user vegetarian?", "Am I vegetarian?"),
    ("What is the user's favourite food?", "What is my favourite food?"),
    ("user's commute", "my commute"),
    ("What did the assistant recommend to the user?", "What did the assistant recommend to me?"),
    ("Where did the user go last summer", "Where did I go last summer"),
])
def test_first_person_reading(query, expected):
    assert first_person(query) == expected


@pytest.mark.parametrize("query", ["What does Caroline do?", "list user accounts",
                                   "How many users signed up?", "ECONNREFUSED"])
def test_queries_not_about_the_user_are_left_alone(query):
    assert first_person(query) is None
